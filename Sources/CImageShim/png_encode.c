/* PNG encoding through the libpng API, with every longjmp caught here. */
#include "CImageShim.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

typedef struct {
  jmp_buf jump;
  uint8_t *buffer;
  size_t length;
  size_t capacity;
  char message[200];
} PNGSink;

static void on_write_error(png_structp png, png_const_charp text) {
  PNGSink *sink = (PNGSink *)png_get_error_ptr(png);
  snprintf(sink->message, sizeof sink->message, "%s", text);
  longjmp(sink->jump, 1);
}

static void on_write_warning(png_structp png, png_const_charp text) {
  (void)png;
  (void)text;
}

static void write_to_memory(png_structp png, png_bytep data, size_t count) {
  PNGSink *sink = (PNGSink *)png_get_io_ptr(png);
  if (count > sink->capacity - sink->length) {
    size_t capacity = sink->capacity < 4096 ? 4096 : sink->capacity;
    while (count > capacity - sink->length) {
      if (capacity > SIZE_MAX / 2) {
        png_error(png, "PNG output too large");
      }
      capacity *= 2;
    }
    uint8_t *grown = realloc(sink->buffer, capacity);
    if (grown == NULL) {
      png_error(png, "out of memory for PNG output");
    }
    sink->buffer = grown;
    sink->capacity = capacity;
  }
  memcpy(sink->buffer + sink->length, data, count);
  sink->length += count;
}

static void flush_memory(png_structp png) {
  (void)png;
}

int CImageShim_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                          int channels, uint8_t **out, size_t *out_length,
                          char *message, size_t message_capacity) {
  *out = NULL;
  *out_length = 0;
  static const int color_types[] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                    PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  if (channels < 1 || channels > 4 || width == 0 || height == 0) {
    snprintf(message, message_capacity, "PNG encoder needs 1-4 channels and a non-empty image");
    return CImageShim_UNSUPPORTED;
  }
  /* State that must survive a longjmp lives in memory, not in registers. */
  struct {
    PNGSink sink;
    png_structp png;
    png_infop info;
  } s;
  memset(&s, 0, sizeof s);
  if (setjmp(s.sink.jump)) {
    snprintf(message, message_capacity, "%s", s.sink.message);
    png_destroy_write_struct(&s.png, &s.info);
    free(s.sink.buffer);
    return CImageShim_CORRUPT;
  }
  s.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s.sink, on_write_error, on_write_warning);
  if (s.png == NULL) {
    snprintf(message, message_capacity, "out of memory creating the PNG encoder");
    return CImageShim_MEMORY;
  }
  s.info = png_create_info_struct(s.png);
  if (s.info == NULL) {
    png_destroy_write_struct(&s.png, NULL);
    snprintf(message, message_capacity, "out of memory creating the PNG encoder");
    return CImageShim_MEMORY;
  }
  png_set_write_fn(s.png, &s.sink, write_to_memory, flush_memory);
  png_set_IHDR(s.png, s.info, width, height, 8, color_types[channels], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(s.png, 6);
  png_write_info(s.png, s.info);
  for (uint32_t r = 0; r < height; r++) {
    png_write_row(s.png, pixels + (size_t)r * stride);
  }
  png_write_end(s.png, s.info);
  png_destroy_write_struct(&s.png, &s.info);
  *out = s.sink.buffer;
  *out_length = s.sink.length;
  return CImageShim_OK;
}
