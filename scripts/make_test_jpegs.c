/* Writes the JPEG test images of tests/data/images/ (README.md there says
 * what each holds) with libjpeg:
 *   cc -o /tmp/make_test_jpegs scripts/make_test_jpegs.c -ljpeg
 *   /tmp/make_test_jpegs tests/data/images
 * Every image is made of flat blocks aligned to the JPEG blocks (MCUs), so
 * the decoded pixels inside a block are the written colour within a few
 * levels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

/* Block colours, top-left, top-right, bottom-left, bottom-right. */
static const unsigned char kRgb[4][3] = {{200, 40, 40}, {40, 200, 40}, {40, 40, 200}, {128, 128, 128}};
static const unsigned char kGray[4] = {32, 96, 160, 224};
/* Inverted CMYK as Adobe writes it: r = k * c / 255 on decoding. */
static const unsigned char kCmyk[4][4] = {
    {200, 100, 50, 255}, {255, 255, 255, 128}, {50, 150, 250, 255}, {255, 0, 255, 255}};

static int block_of(int y, int x, int size) { return (y >= size / 2) * 2 + (x >= size / 2); }

static void write_jpeg(const char* dir, const char* name, int size, int components,
                       J_COLOR_SPACE space, int subsample, int progressive) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (!f) { perror(path); exit(1); }
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = size;
  c.image_height = size;
  c.input_components = components;
  c.in_color_space = space;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  if (!subsample)
    for (int i = 0; i < c.num_components; ++i) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
  if (progressive) jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  unsigned char* row = malloc((size_t)size * components);
  while (c.next_scanline < c.image_height) {
    int y = c.next_scanline;
    for (int x = 0; x < size; ++x) {
      int b = block_of(y, x, size);
      for (int k = 0; k < components; ++k)
        row[x * components + k] = components == 1 ? kGray[b] : components == 3 ? kRgb[b][k] : kCmyk[b][k];
    }
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  free(row);
  fclose(f);
}

int main(int argc, char** argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }
  write_jpeg(argv[1], "blocks_rgb444.jpg", 16, 3, JCS_RGB, 0, 0);
  write_jpeg(argv[1], "blocks_rgb420.jpg", 32, 3, JCS_RGB, 1, 0);
  write_jpeg(argv[1], "blocks_gray.jpg", 16, 1, JCS_GRAYSCALE, 0, 0);
  write_jpeg(argv[1], "blocks_progressive.jpg", 16, 3, JCS_RGB, 0, 1);
  write_jpeg(argv[1], "blocks_cmyk.jpg", 16, 4, JCS_CMYK, 0, 0);
  return 0;
}
