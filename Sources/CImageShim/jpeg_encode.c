/* JPEG encoding through the libjpeg API, with every longjmp caught here. */
#include "CImageShim.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

typedef struct {
  struct jpeg_error_mgr error;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
} EncodeErrors;

static void on_encode_error(j_common_ptr cinfo) {
  EncodeErrors *errors = (EncodeErrors *)cinfo->err;
  (*cinfo->err->format_message)(cinfo, errors->message);
  longjmp(errors->jump, 1);
}

static void on_encode_output(j_common_ptr cinfo) {
  (void)cinfo;
}

void CImageShim_free(void *pointer) {
  free(pointer);
}

int CImageShim_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                           int channels, int quality, uint8_t **out, size_t *out_length,
                           char *message, size_t message_capacity) {
  *out = NULL;
  *out_length = 0;
  if ((channels != 1 && channels != 3) || width == 0 || height == 0) {
    snprintf(message, message_capacity, "JPEG encoder needs 1 or 3 channels and a non-empty image");
    return CImageShim_UNSUPPORTED;
  }
  /* Everything that must survive a longjmp lives in this struct, in memory. */
  struct {
    struct jpeg_compress_struct cinfo;
    EncodeErrors errors;
    unsigned char *buffer;
    unsigned long length;
    int created;
  } s;
  memset(&s, 0, sizeof s);
  s.cinfo.err = jpeg_std_error(&s.errors.error);
  s.errors.error.error_exit = on_encode_error;
  s.errors.error.output_message = on_encode_output;
  if (setjmp(s.errors.jump)) {
    snprintf(message, message_capacity, "%s", s.errors.message);
    if (s.created) {
      jpeg_destroy_compress(&s.cinfo);
    }
    free(s.buffer); /* jpeg_mem_dest's buffer, if any, is ours to free */
    return CImageShim_CORRUPT;
  }
  jpeg_create_compress(&s.cinfo);
  s.created = 1;
  jpeg_mem_dest(&s.cinfo, &s.buffer, &s.length);
  s.cinfo.image_width = width;
  s.cinfo.image_height = height;
  s.cinfo.input_components = channels;
  s.cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_EXT_RGB;
  jpeg_set_defaults(&s.cinfo);
  jpeg_set_quality(&s.cinfo, quality < 1 ? 1 : (quality > 100 ? 100 : quality), TRUE);
  /* Standard Huffman tables, as libvips's jpegsave writes by default. Optimized tables
     (optimize_coding) made the corpus photos' thumbnails and display copies only 1-3% smaller at
     quality 85, and cost 2.5-3x the encoding time: libjpeg-turbo then buffers every coefficient,
     gathers statistics in C and entropy-codes twice (3% of the mixed load's CPU went to
     jpeg_gen_optimal_table alone). */
  s.cinfo.optimize_coding = FALSE;
  jpeg_start_compress(&s.cinfo, TRUE);
  while (s.cinfo.next_scanline < s.cinfo.image_height) {
    JSAMPROW row = (JSAMPROW)(pixels + (size_t)s.cinfo.next_scanline * stride);
    jpeg_write_scanlines(&s.cinfo, &row, 1);
  }
  jpeg_finish_compress(&s.cinfo);
  jpeg_destroy_compress(&s.cinfo);
  *out = s.buffer;
  *out_length = s.length;
  return CImageShim_OK;
}
