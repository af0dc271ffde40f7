/* JPEG decoding through the libjpeg API, with every longjmp caught here. */
#include "CImageShim.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>
#include <unistd.h>

/* libjpeg-turbo's TJFLAG_LIMITSCANS uses the same bound against scan-count DoS. */
#define MAX_PROGRESSIVE_SCANS 500
/* Benign warnings (extraneous bytes, bad ICC marker...) tolerated per image. */
#define MAX_BENIGN_WARNINGS 100
/* Bytes per read(2) when the JPEG comes from a file descriptor (Pillow reads 64 KiB blocks too). */
#define FILE_CHUNK 65536

/* A libjpeg source that hands out a prefix already in memory, then reads the
 * rest of the file from a descriptor in FILE_CHUNK blocks, so the whole file
 * is never held in memory. The end of the file is handled as jpeg_mem_src
 * does: a JWRN_JPEG_EOF warning (which on_emit_message turns into TRUNCATED)
 * and a fake EOI. */
struct fd_source {
  struct jpeg_source_mgr pub;
  int fd;
  JOCTET *chunk;        /* FILE_CHUNK bytes, malloc'd on first refill */
};

struct CImageShim_JPEGDecoder {
  struct jpeg_decompress_struct cinfo;
  struct jpeg_error_mgr error;
  struct jpeg_progress_mgr progress;
  jmp_buf jump;
  int created;          /* jpeg_create_decompress succeeded */
  int status;           /* first failure; sticky */
  int benign_warnings;
  int layout;
  uint8_t *icc;         /* malloc'd by jpeg_read_icc_profile */
  struct fd_source source; /* used when the data comes from a descriptor */
  unsigned int icc_length;
  char message[JMSG_LENGTH_MAX + 32];
};

static CImageShim_JPEGDecoder *decoder_of(j_common_ptr cinfo) {
  return (CImageShim_JPEGDecoder *)cinfo->client_data;
}

static int classify_error(int code) {
  switch (code) {
  case JERR_OUT_OF_MEMORY:
  case JERR_NO_BACKING_STORE:
  case JERR_TFILE_CREATE:
  case JERR_TFILE_READ:
  case JERR_TFILE_SEEK:
  case JERR_TFILE_WRITE:
    return CImageShim_MEMORY;
  case JERR_BAD_PRECISION:
  case JERR_SOF_UNSUPPORTED:
  case JERR_ARITH_NOTIMPL:
  case JERR_NOT_COMPILED:
  case JERR_CONVERSION_NOTIMPL:
  case JERR_EMPTY_IMAGE:
    return CImageShim_UNSUPPORTED;
  case JERR_IMAGE_TOO_BIG:
  case JERR_WIDTH_OVERFLOW:
    return CImageShim_LIMIT;
  default:
    return CImageShim_CORRUPT;
  }
}

static void fail(CImageShim_JPEGDecoder *d, int status) {
  if (d->status == CImageShim_OK) {
    d->status = status;
  }
  longjmp(d->jump, 1);
}

static void on_error_exit(j_common_ptr cinfo) {
  CImageShim_JPEGDecoder *d = decoder_of(cinfo);
  if (d->status == CImageShim_OK) {
    (*cinfo->err->format_message)(cinfo, d->message);
  }
  fail(d, classify_error(cinfo->err->msg_code));
}

/* Warnings decide between "damaged pixels" (reject) and harmless oddities. */
static void on_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) {
    return; /* trace messages */
  }
  CImageShim_JPEGDecoder *d = decoder_of(cinfo);
  int code = cinfo->err->msg_code;
  int status = CImageShim_OK;
  int too_many = 0;
  switch (code) {
  case JWRN_JPEG_EOF:
    status = CImageShim_TRUNCATED;
    break;
  case JWRN_HIT_MARKER:
  case JWRN_HUFF_BAD_CODE:
  case JWRN_MUST_RESYNC:
  case JWRN_ARITH_BAD_CODE:
  case JWRN_NOT_SEQUENTIAL:
  case JWRN_TOO_MUCH_DATA:
    status = CImageShim_CORRUPT;
    break;
  default: /* JWRN_EXTRANEOUS_DATA, JWRN_BOGUS_ICC, JWRN_ADOBE_XFORM, JFIF oddities... */
    if (++d->benign_warnings <= MAX_BENIGN_WARNINGS) {
      return;
    }
    status = CImageShim_CORRUPT;
    too_many = 1;
    break;
  }
  if (d->status == CImageShim_OK) {
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    if (too_many) {
      snprintf(d->message, sizeof d->message, "more than %d libjpeg warnings (last: %s)",
               MAX_BENIGN_WARNINGS, text);
    } else {
      snprintf(d->message, sizeof d->message, "%s", text);
    }
  }
  fail(d, status);
}

static void on_output_message(j_common_ptr cinfo) {
  (void)cinfo; /* never print to stderr */
}

static void on_progress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) {
    return;
  }
  j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
  if (dinfo->progressive_mode && dinfo->input_scan_number > MAX_PROGRESSIVE_SCANS) {
    CImageShim_JPEGDecoder *d = decoder_of(cinfo);
    if (d->status == CImageShim_OK) {
      snprintf(d->message, sizeof d->message, "progressive JPEG has more than %d scans",
               MAX_PROGRESSIVE_SCANS);
    }
    fail(d, CImageShim_CORRUPT);
  }
}

static void fd_init_source(j_decompress_ptr cinfo) { (void)cinfo; }

static void fd_term_source(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean fd_fill_input_buffer(j_decompress_ptr cinfo) {
  static const JOCTET fake_eoi[2] = {0xFF, JPEG_EOI};
  CImageShim_JPEGDecoder *d = decoder_of((j_common_ptr)cinfo);
  struct fd_source *src = &d->source;
  if (src->chunk == NULL) {
    src->chunk = malloc(FILE_CHUNK);
    if (src->chunk == NULL) {
      ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    }
  }
  ssize_t n;
  do {
    n = read(src->fd, src->chunk, FILE_CHUNK);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    snprintf(d->message, sizeof d->message, "read failed: %s", strerror(errno));
    fail(d, CImageShim_READ_FAILED);
  }
  if (n == 0) {
    WARNMS(cinfo, JWRN_JPEG_EOF);
    src->pub.next_input_byte = fake_eoi;
    src->pub.bytes_in_buffer = 2;
    return TRUE;
  }
  src->pub.next_input_byte = src->chunk;
  src->pub.bytes_in_buffer = (size_t)n;
  return TRUE;
}

static void fd_skip_input_data(j_decompress_ptr cinfo, long count) {
  struct jpeg_source_mgr *src = cinfo->src;
  if (count <= 0) {
    return;
  }
  while (count > (long)src->bytes_in_buffer) {
    count -= (long)src->bytes_in_buffer;
    (void)(*src->fill_input_buffer)(cinfo);
  }
  src->next_input_byte += (size_t)count;
  src->bytes_in_buffer -= (size_t)count;
}

CImageShim_JPEGDecoder *CImageShim_jpeg_decoder_create(void) {
  CImageShim_JPEGDecoder *d = calloc(1, sizeof *d);
  if (d == NULL) {
    return NULL;
  }
  d->cinfo.err = jpeg_std_error(&d->error);
  d->error.error_exit = on_error_exit;
  d->error.emit_message = on_emit_message;
  d->error.output_message = on_output_message;
  d->cinfo.client_data = d;
  strcpy(d->message, "no error");
  if (setjmp(d->jump)) {
    free(d); /* jpeg_create_decompress failed before allocating anything we own */
    return NULL;
  }
  jpeg_create_decompress(&d->cinfo);
  d->created = 1;
  d->progress.progress_monitor = on_progress;
  d->cinfo.progress = &d->progress;
  return d;
}

void CImageShim_jpeg_decoder_destroy(CImageShim_JPEGDecoder *d) {
  if (d == NULL) {
    return;
  }
  if (d->created) {
    jpeg_destroy_decompress(&d->cinfo); /* frees every pool, also after an error */
  }
  free(d->icc);
  free(d->source.chunk);
  free(d);
}

const char *CImageShim_jpeg_decoder_message(const CImageShim_JPEGDecoder *d) {
  return d->message;
}

int CImageShim_jpeg_read_header(CImageShim_JPEGDecoder *d, const uint8_t *data, size_t length, int fd,
                                uint64_t max_memory, CImageShim_JPEGHeader *header) {
  if (d->status != CImageShim_OK) {
    return d->status;
  }
  if (setjmp(d->jump)) {
    return d->status;
  }
  j_decompress_ptr cinfo = &d->cinfo;
  if (max_memory > 0) {
    cinfo->mem->max_memory_to_use = (long)(max_memory > (uint64_t)0x7fffffff ? 0x7fffffff : max_memory);
  }
  if (fd < 0) {
    jpeg_mem_src(cinfo, data, (unsigned long)length);
  } else {
    struct fd_source *src = &d->source;
    src->fd = fd;
    src->pub.init_source = fd_init_source;
    src->pub.fill_input_buffer = fd_fill_input_buffer;
    src->pub.skip_input_data = fd_skip_input_data;
    src->pub.resync_to_restart = jpeg_resync_to_restart;
    src->pub.term_source = fd_term_source;
    src->pub.next_input_byte = data;
    src->pub.bytes_in_buffer = length;
    cinfo->src = &src->pub;
  }
  jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF);
  if (jpeg_read_header(cinfo, TRUE) != JPEG_HEADER_OK) {
    snprintf(d->message, sizeof d->message, "JPEG datastream contains no image");
    d->status = CImageShim_CORRUPT;
    return d->status;
  }
  switch (cinfo->jpeg_color_space) {
  case JCS_GRAYSCALE:
    d->layout = CImageShim_JPEG_GREY;
    break;
  case JCS_YCbCr:
  case JCS_RGB:
    d->layout = CImageShim_JPEG_RGB;
    break;
  case JCS_CMYK:
  case JCS_YCCK:
    d->layout = CImageShim_JPEG_CMYK;
    break;
  default:
    snprintf(d->message, sizeof d->message, "unsupported JPEG colour space with %d components",
             cinfo->num_components);
    d->status = CImageShim_UNSUPPORTED;
    return d->status;
  }
  JOCTET *icc = NULL;
  unsigned int icc_length = 0;
  if (jpeg_read_icc_profile(cinfo, &icc, &icc_length)) {
    d->icc = icc;
    d->icc_length = icc_length;
  }
  header->width = cinfo->image_width;
  header->height = cinfo->image_height;
  header->components = cinfo->num_components;
  header->layout = d->layout;
  header->progressive = cinfo->progressive_mode ? 1 : 0;
  header->adobe_inverted = (d->layout == CImageShim_JPEG_CMYK && cinfo->saw_Adobe_marker) ? 1 : 0;
  header->icc = d->icc;
  header->icc_length = d->icc_length;
  return CImageShim_OK;
}

int CImageShim_jpeg_start(CImageShim_JPEGDecoder *d, int scale_denom, uint32_t *output_width,
                          uint32_t *output_height) {
  if (d->status != CImageShim_OK) {
    return d->status;
  }
  if (setjmp(d->jump)) {
    return d->status;
  }
  j_decompress_ptr cinfo = &d->cinfo;
  cinfo->scale_num = 1;
  cinfo->scale_denom = (unsigned int)scale_denom;
  cinfo->dct_method = JDCT_ISLOW;
  switch (d->layout) {
  case CImageShim_JPEG_GREY:
    cinfo->out_color_space = JCS_GRAYSCALE;
    break;
  case CImageShim_JPEG_RGB:
    cinfo->out_color_space = JCS_EXT_RGB;
    break;
  default:
    cinfo->out_color_space = JCS_CMYK; /* libjpeg turns YCCK into CMYK */
    break;
  }
  jpeg_start_decompress(cinfo);
  if (cinfo->output_components != d->layout) {
    snprintf(d->message, sizeof d->message, "unexpected JPEG output with %d components",
             cinfo->output_components);
    d->status = CImageShim_UNSUPPORTED;
    return d->status;
  }
  *output_width = cinfo->output_width;
  *output_height = cinfo->output_height;
  return CImageShim_OK;
}

int CImageShim_jpeg_read_rows(CImageShim_JPEGDecoder *d, uint8_t *buffer, size_t stride, int max_rows,
                              int *rows_read) {
  *rows_read = 0;
  if (d->status != CImageShim_OK) {
    return d->status;
  }
  if (setjmp(d->jump)) {
    return d->status;
  }
  j_decompress_ptr cinfo = &d->cinfo;
  int count = 0;
  while (count < max_rows && cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW rows[16];
    int want = max_rows - count;
    if (want > 16) {
      want = 16;
    }
    for (int i = 0; i < want; i++) {
      rows[i] = buffer + (size_t)(count + i) * stride;
    }
    JDIMENSION got = jpeg_read_scanlines(cinfo, rows, (JDIMENSION)want);
    if (got == 0) {
      break; /* suspension cannot happen with a memory source; stay safe */
    }
    count += (int)got;
    *rows_read = count;
  }
  return CImageShim_OK;
}
