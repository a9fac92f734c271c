/* blosckit native layer: the functions and structs Python calls.
 *
 * build_native.py hands this file to cffi as its cdef, so it holds plain
 * declarations only (no preprocessor lines).  All lengths are byte counts;
 * functions that can fail return a negative BK_E* code.
 */

/* cpu.c: run-time choice of the vector code path */
int bk_simd_level(void);            /* level in use now */
int bk_simd_best(void);             /* best level this CPU offers */
int bk_set_simd_level(int level);   /* 0 on success, BK_EPARAM if unsupported */

/* shuffle.c: byte (un)shuffle of one whole block; src and dst must not overlap */
int bk_shuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize);
int bk_unshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize);

/* bitshuffle.c: bit (un)shuffle; legacy != 0 selects the Blosc1 (chunk version 2) rule */
int bk_bitshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize, int legacy);
int bk_bitunshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize, int legacy);

/* blosclz.c */
int64_t bk_blosclz_decompress(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen);
/* flavor: 2 = C-Blosc2 3.x encoder, 1 = C-Blosc 1.21 encoder (split only used there) */
int64_t bk_blosclz_compress(int clevel, const uint8_t *src, size_t len, uint8_t *dst,
                            size_t maxout, int flavor, int split);

/* filters.c */
void bk_delta_encode(const uint8_t *dref, const uint8_t *src, uint8_t *dst, size_t len,
                     size_t typesize, int first_block);
void bk_delta_decode(const uint8_t *dref, uint8_t *buf, size_t len, size_t typesize,
                     int first_block);
void bk_bytedelta_encode(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize,
                         int buggy);
void bk_bytedelta_decode(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize,
                         int buggy);
int bk_trunc_prec(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize, int prec_bits);

/* chunkdec.c: whole-chunk decoding of regular chunks (see the file) */
typedef struct {
  const uint8_t *src;        /* the chunk */
  int32_t cbytes;            /* checked: <= the buffer length */
  const int32_t *bstarts;    /* checked by the caller to lie inside the chunk */
  int32_t nblocks, nbytes, blocksize, typesize;
  int version, split, token_follows, uses_delta;
  int nfilters;              /* filters to undo, in decode order */
  uint8_t filter_ids[6], filter_metas[6];
  int codec_kind;            /* BK_CODEC_* */
  void *fn, *fn_dict, *fn_error, *fn_new, *fn_free;  /* the codec package's C entry points */
  void *fn_begin, *fn_end;   /* zlib: per-stream init and end */
  const uint8_t *dict;
  int32_t dictlen;
  uint8_t *dst;              /* nbytes long (count blocks long when count > 0) */
  int32_t first, count;      /* the blocks to decode; count 0: every block */
} bk_chunk;
int32_t bk_decode_chunk(const bk_chunk *c, int nthreads);

/* chunkenc.c: block encoding for the builder (see the file) */
typedef struct {
  const uint8_t *src;        /* the whole input */
  int32_t nbytes, blocksize, typesize, nblocks;
  int version, split, detect_runs;
  int nfilters;              /* filters to apply, in slot order */
  uint8_t filter_ids[6], filter_metas[6];
  int codec_kind, clevel;
  int codec_param;           /* blosclz: flavor; lz4: acceleration; lz4hc, zstd: level */
  void *fn, *fn_error, *fn_new, *fn_free;
  void *fn_begin, *fn_end;   /* zlib: per-stream init and end */
  uint8_t *out;              /* nblocks slots of block_cap bytes */
  int64_t block_cap;
  int32_t *sizes, *needs;    /* per block: bytes written, highest budget position */
} bk_encoder;
int bk_encode_blocks(const bk_encoder *e, int nthreads);
