/*
 * CImageShim: the only place where libjpeg and libpng may longjmp.
 *
 * Every entry point sets up its own setjmp, so an error inside the C library
 * unwinds only through C frames and comes back to Swift as a status code plus
 * a one-line message (CImageShim_*_message). Swift never sees a longjmp.
 *
 * Handles are opaque, created by *_create and released by *_destroy, which
 * frees everything the library allocated, including after an error.
 * A handle is used by one thread at a time.
 */
#ifndef CIMAGESHIM_H
#define CIMAGESHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes shared by every entry point. */
enum {
  CImageShim_OK = 0,
  CImageShim_CORRUPT = 1,          /* library error or data-corruption warning */
  CImageShim_TRUNCATED = 2,        /* input ended before the image data did */
  CImageShim_MEMORY = 3,           /* decoder memory cap or malloc failure */
  CImageShim_UNSUPPORTED = 4,      /* valid file, variant the library cannot decode */
  CImageShim_LIMIT = 5,            /* image larger than the configured limits */
  CImageShim_READ_FAILED = 6       /* read(2) on the input descriptor failed */
};

/* Pixel layouts that the JPEG decoder produces. */
enum {
  CImageShim_JPEG_GREY = 1,        /* 1 byte per pixel */
  CImageShim_JPEG_RGB = 3,         /* R, G, B */
  CImageShim_JPEG_CMYK = 4         /* C, M, Y, K as stored (Adobe files are inverted) */
};

/* ---- JPEG decode (libjpeg API) ---- */

typedef struct CImageShim_JPEGDecoder CImageShim_JPEGDecoder;

typedef struct {
  uint32_t width, height;          /* image_width, image_height */
  int components;                  /* num_components */
  int layout;                      /* CImageShim_JPEG_GREY / RGB / CMYK */
  int progressive;                 /* 1 for SOF2/SOF10 */
  int adobe_inverted;              /* CMYK/YCCK with an Adobe APP14 marker */
  const uint8_t *icc;              /* reassembled APP2 ICC profile, or NULL; owned by the decoder */
  uint32_t icc_length;
} CImageShim_JPEGHeader;

/* Returns NULL only when malloc fails. */
CImageShim_JPEGDecoder *CImageShim_jpeg_decoder_create(void);
void CImageShim_jpeg_decoder_destroy(CImageShim_JPEGDecoder *decoder);
/* One line describing the last failure (never NULL). */
const char *CImageShim_jpeg_decoder_message(const CImageShim_JPEGDecoder *decoder);

/* Reads markers up to the first SOS. `data` must stay valid until destroy.
 * fd < 0: `data` is the whole file. fd >= 0: `data` is the start of the file
 * and the rest is read from fd (positioned just after it) in 64 KiB blocks as
 * decoding goes; fd must stay open until destroy, and a failed read gives
 * CImageShim_READ_FAILED. `max_memory` caps libjpeg's own allocations (0 = no cap). */
int CImageShim_jpeg_read_header(CImageShim_JPEGDecoder *decoder, const uint8_t *data, size_t length, int fd,
                                uint64_t max_memory, CImageShim_JPEGHeader *header);

/* Starts decompression at 1/scale_denom (1, 2, 4 or 8). On success writes the
 * scaled output size; rows then come out top to bottom. */
int CImageShim_jpeg_start(CImageShim_JPEGDecoder *decoder, int scale_denom,
                          uint32_t *output_width, uint32_t *output_height);

/* Decodes up to max_rows rows into buffer (row r at buffer + r * stride,
 * stride >= output_width * layout). *rows_read gets the count (0 at the end). */
int CImageShim_jpeg_read_rows(CImageShim_JPEGDecoder *decoder, uint8_t *buffer, size_t stride,
                              int max_rows, int *rows_read);

/* ---- JPEG encode ---- */

/* Encodes 1-channel grey or 3-channel RGB rows as a baseline JPEG (4:2:0 for
 * colour), quality 1-100. On success *out is malloc'd: release it with
 * CImageShim_free. On failure `message` gets one line (NUL-terminated). */
int CImageShim_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                           int channels, int quality, uint8_t **out, size_t *out_length,
                           char *message, size_t message_capacity);

/* ---- PNG decode (libpng API) ---- */

typedef struct CImageShim_PNGDecoder CImageShim_PNGDecoder;

typedef struct {
  uint32_t width, height;
  int channels;                    /* after transforms: 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA (8 bit) */
  int interlaced;                  /* Adam7: rows only come out via read_image */
  const uint8_t *icc;              /* iCCP profile (decompressed), or NULL; owned by the decoder */
  uint32_t icc_length;
} CImageShim_PNGHeader;

CImageShim_PNGDecoder *CImageShim_png_decoder_create(void);
void CImageShim_png_decoder_destroy(CImageShim_PNGDecoder *decoder);
const char *CImageShim_png_decoder_message(const CImageShim_PNGDecoder *decoder);

/* Reads the chunks up to the first IDAT and sets up the transforms (palette,
 * low bit depth and tRNS expanded, 16 bits scaled to 8). Images wider or taller
 * than max_side are refused (png_set_user_limits); no ancillary chunk may
 * decompress to more than chunk_max bytes; text chunks are skipped unread. */
int CImageShim_png_read_header(CImageShim_PNGDecoder *decoder, const uint8_t *data, size_t length,
                               uint32_t max_side, size_t chunk_max, CImageShim_PNGHeader *header);

/* Non-interlaced images: decodes the next `rows` rows. */
int CImageShim_png_read_rows(CImageShim_PNGDecoder *decoder, uint8_t *buffer, size_t stride, int rows);

/* Any image: decodes every row (all Adam7 passes) into buffer. */
int CImageShim_png_read_image(CImageShim_PNGDecoder *decoder, uint8_t *buffer, size_t stride);

/* ---- PNG encode ---- */

/* Encodes 8-bit rows with 1-4 channels (grey, grey+alpha, RGB, RGBA). */
int CImageShim_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                          int channels, uint8_t **out, size_t *out_length,
                          char *message, size_t message_capacity);

void CImageShim_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
