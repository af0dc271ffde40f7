/* PNG decoding through the libpng API, with every longjmp caught here. */
#include "CImageShim.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

struct CImageShim_PNGDecoder {
  png_structp png;
  png_infop info;
  jmp_buf jump;
  const uint8_t *data;
  size_t length;
  size_t position;
  int status;
  int channels;
  uint32_t height;
  png_bytep *rows;      /* row pointers for read_image */
  char message[200];
};

static void on_png_error(png_structp png, png_const_charp text) {
  CImageShim_PNGDecoder *d = (CImageShim_PNGDecoder *)png_get_error_ptr(png);
  if (d->status == CImageShim_OK) {
    snprintf(d->message, sizeof d->message, "%s", text);
    if (strstr(text, "exceeds user limit") != NULL || strstr(text, "Image width is too large") != NULL
        || strstr(text, "Image height is too large") != NULL) {
      d->status = CImageShim_LIMIT;
    } else if (strstr(text, "memory") != NULL) {
      d->status = CImageShim_MEMORY;
    } else {
      d->status = CImageShim_CORRUPT;
    }
  }
  longjmp(d->jump, 1);
}

static void on_png_warning(png_structp png, png_const_charp text) {
  (void)png; /* benign: tRNS out of range, extra IDAT data, bad ancillary CRC... */
  (void)text;
}

static void read_from_memory(png_structp png, png_bytep out, size_t count) {
  CImageShim_PNGDecoder *d = (CImageShim_PNGDecoder *)png_get_io_ptr(png);
  if (count > d->length - d->position) {
    if (d->status == CImageShim_OK) {
      snprintf(d->message, sizeof d->message, "unexpected end of PNG data");
      d->status = CImageShim_TRUNCATED;
    }
    png_error(png, "unexpected end of PNG data");
  }
  memcpy(out, d->data + d->position, count);
  d->position += count;
}

CImageShim_PNGDecoder *CImageShim_png_decoder_create(void) {
  CImageShim_PNGDecoder *d = calloc(1, sizeof *d);
  if (d != NULL) {
    strcpy(d->message, "no error");
  }
  return d;
}

void CImageShim_png_decoder_destroy(CImageShim_PNGDecoder *d) {
  if (d == NULL) {
    return;
  }
  if (d->png != NULL) {
    png_destroy_read_struct(&d->png, d->info != NULL ? &d->info : NULL, NULL);
  }
  free(d->rows);
  free(d);
}

const char *CImageShim_png_decoder_message(const CImageShim_PNGDecoder *d) {
  return d->message;
}

int CImageShim_png_read_header(CImageShim_PNGDecoder *d, const uint8_t *data, size_t length,
                               uint32_t max_side, size_t chunk_max, CImageShim_PNGHeader *header) {
  if (d->status != CImageShim_OK || d->png != NULL) {
    return d->status != CImageShim_OK ? d->status : CImageShim_CORRUPT;
  }
  if (setjmp(d->jump)) {
    return d->status;
  }
  d->data = data;
  d->length = length;
  d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, on_png_error, on_png_warning);
  if (d->png == NULL) {
    snprintf(d->message, sizeof d->message, "out of memory creating the PNG decoder");
    return d->status = CImageShim_MEMORY;
  }
  d->info = png_create_info_struct(d->png);
  if (d->info == NULL) {
    snprintf(d->message, sizeof d->message, "out of memory creating the PNG decoder");
    return d->status = CImageShim_MEMORY;
  }
  png_set_read_fn(d->png, d, read_from_memory);
  png_set_user_limits(d->png, max_side, max_side);
  png_set_chunk_malloc_max(d->png, chunk_max);
  png_set_chunk_cache_max(d->png, 256);
  /* Text and EXIF chunks are skipped unread: a zTXt bomb is never inflated.
   * (Orientation comes from the Swift side's own eXIf parser.) */
  static const png_byte skipped[] = "tEXt\0zTXt\0iTXt\0eXIf\0sPLT\0";
  png_set_keep_unknown_chunks(d->png, PNG_HANDLE_CHUNK_NEVER, skipped, 5);
  png_read_info(d->png, d->info);

  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
  png_get_IHDR(d->png, d->info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_set_palette_to_rgb(d->png);
  }
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) {
    png_set_expand_gray_1_2_4_to_8(d->png);
  }
  if (png_get_valid(d->png, d->info, PNG_INFO_tRNS)) {
    png_set_tRNS_to_alpha(d->png);
  }
  if (bit_depth == 16) {
    png_set_scale_16(d->png);
  }
  (void)png_set_interlace_handling(d->png);
  png_read_update_info(d->png, d->info);

  d->channels = png_get_channels(d->png, d->info);
  d->height = height;
  if (png_get_bit_depth(d->png, d->info) != 8 || d->channels < 1 || d->channels > 4
      || png_get_rowbytes(d->png, d->info) != (size_t)width * (size_t)d->channels) {
    snprintf(d->message, sizeof d->message, "unexpected PNG row layout after transforms");
    return d->status = CImageShim_UNSUPPORTED;
  }
  header->width = width;
  header->height = height;
  header->channels = d->channels;
  header->interlaced = interlace != PNG_INTERLACE_NONE;
  header->icc = NULL;
  header->icc_length = 0;
  png_charp name = NULL;
  int compression = 0;
  png_bytep profile = NULL;
  png_uint_32 profile_length = 0;
  if (png_get_iCCP(d->png, d->info, &name, &compression, &profile, &profile_length) && profile != NULL) {
    header->icc = profile;
    header->icc_length = profile_length;
  }
  return CImageShim_OK;
}

int CImageShim_png_read_rows(CImageShim_PNGDecoder *d, uint8_t *buffer, size_t stride, int rows) {
  if (d->status != CImageShim_OK || d->png == NULL) {
    return d->status != CImageShim_OK ? d->status : CImageShim_CORRUPT;
  }
  if (setjmp(d->jump)) {
    return d->status;
  }
  for (int r = 0; r < rows; r++) {
    png_read_row(d->png, buffer + (size_t)r * stride, NULL);
  }
  return CImageShim_OK;
}

int CImageShim_png_read_image(CImageShim_PNGDecoder *d, uint8_t *buffer, size_t stride) {
  if (d->status != CImageShim_OK || d->png == NULL) {
    return d->status != CImageShim_OK ? d->status : CImageShim_CORRUPT;
  }
  if (setjmp(d->jump)) {
    return d->status;
  }
  if (d->rows == NULL) {
    d->rows = malloc((size_t)d->height * sizeof(png_bytep));
    if (d->rows == NULL) {
      snprintf(d->message, sizeof d->message, "out of memory for PNG row pointers");
      return d->status = CImageShim_MEMORY;
    }
  }
  for (uint32_t r = 0; r < d->height; r++) {
    d->rows[r] = buffer + (size_t)r * stride;
  }
  png_read_image(d->png, d->rows);
  return CImageShim_OK;
}
