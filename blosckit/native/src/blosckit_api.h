/* blosckit native layer: the functions and structs Python calls.
 *
 * build_native.py hands this file to cffi as its cdef, after the #define
 * lines of blosckit_layout.h (the format facts, which it uses by name), so
 * it holds plain declarations only (no preprocessor lines).  All lengths are byte counts;
 * functions that can fail return a negative BK_E* code.
 */

/* Native codec kinds: the codec a block loop calls (bk_chunk, bk_encoder,
 * bk_codec_entry).  A decoder's kind is the codec format its streams are
 * stored under; LZ4HC, whose streams are stored as lz4's, is an encoder
 * kind of its own: its codec id (the format with that number, snappy, has
 * no native codec). */
enum {
  BK_KIND_NONE = -1,
  BK_KIND_BLOSCLZ = BK_COMPFORMAT_BLOSCLZ,
  BK_KIND_LZ4 = BK_COMPFORMAT_LZ4,
  BK_KIND_LZ4HC = BK_CODEC_LZ4HC,
  BK_KIND_ZLIB = BK_COMPFORMAT_ZLIB,
  BK_KIND_ZSTD = BK_COMPFORMAT_ZSTD
};

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

/* newbytes.c: the same four kernels writing to a raw address (a fresh bytes
 * object's storage handed over as an integer, which is cheaper to pass than a
 * cffi buffer); len must be >= 1 */
int bk_shuffle_at(const uint8_t *src, uintptr_t dst, size_t len, size_t typesize);
int bk_unshuffle_at(const uint8_t *src, uintptr_t dst, size_t len, size_t typesize);
int bk_bitshuffle_at(const uint8_t *src, uintptr_t dst, size_t len, size_t typesize, int legacy);
int bk_bitunshuffle_at(const uint8_t *src, uintptr_t dst, size_t len, size_t typesize,
                       int legacy);

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

/* runs.c: b2nd chunk <-> array byte runs, BK_RUN_FIELDS int64 per run: chunk
 * offset, array offset, length, count, chunk step, array step */
enum { BK_RUN_FIELDS = 6 };
int bk_copy_runs(uint8_t *chunk, size_t chunk_len, uint8_t *array, size_t array_len,
                 const int64_t *runs, size_t nruns, int64_t array_base, int to_chunk);

/* chunkdec.c: whole-chunk decoding of regular chunks (see the file) */
typedef struct {
  const uint8_t *src;        /* the chunk */
  int32_t cbytes;            /* checked: <= the buffer length */
  const int32_t *bstarts;    /* checked by the caller to lie inside the chunk */
  const uint8_t *bstarts_le; /* used instead when set: the array as stored (int32 LE) */
  int32_t nblocks, nbytes, blocksize, typesize;
  int version, split, token_follows, uses_delta;
  int nfilters;              /* filters to undo, in decode order */
  uint8_t filter_ids[BK_CHUNK_EXTENDED_FILTERS_COUNT];
  uint8_t filter_metas[BK_CHUNK_EXTENDED_FILTERS_META_COUNT];
  int codec_kind;            /* BK_KIND_* */
  void *fn, *fn_dict, *fn_error, *fn_new, *fn_free;  /* the codec package's C entry points */
  void *fn_begin, *fn_end;   /* zlib: per-stream init and end */
  const uint8_t *dict;
  int32_t dictlen;
  uint8_t *dst;              /* nbytes long (count blocks long when count > 0) */
  int32_t first, count;      /* the blocks to decode; count 0: every block */
} bk_chunk;
/* -1: every block decoded; >= 0: lowest failing block; BK_DECODE_NOMEM: a
 * scratch buffer or codec context could not be allocated */
enum { BK_DECODE_NOMEM = -2 };
int32_t bk_decode_chunk(const bk_chunk *c, int nthreads);

/* chunkenc.c: block encoding for the builder (see the file) */
typedef struct {
  const uint8_t *src;        /* the whole input */
  int32_t nbytes, blocksize, typesize, nblocks;
  int version, split, detect_runs;
  int nfilters;              /* filters to apply, in slot order */
  uint8_t filter_ids[BK_CHUNK_EXTENDED_FILTERS_COUNT];
  uint8_t filter_metas[BK_CHUNK_EXTENDED_FILTERS_META_COUNT];
  int codec_kind, clevel;    /* BK_KIND_*, the codec's level */
  int codec_param;           /* blosclz: flavor; lz4: acceleration; lz4hc, zstd: level */
  void *fn, *fn_error, *fn_new, *fn_free;
  void *fn_begin, *fn_end;   /* zlib: per-stream init and end */
  uint8_t *out;              /* nblocks slots of block_cap bytes */
  int64_t block_cap;
  int32_t *sizes, *needs;    /* per block: bytes written, highest budget position */
} bk_encoder;
/* 0, BK_EPARAM (-1) when a block cannot be encoded, BK_ENOMEM (-2) */
int bk_encode_blocks(const bk_encoder *e, int nthreads);

/* chunkenc.c: chunks first .. first + count - 1 of a b2nd array (grid in C
 * order), gathered from the array's items and encoded whole (see the file).
 * headers: the regular, raw and zeros special chunk headers, overhead
 * bytes each (the first two get their cbytes). */
#define BK_ARRAY_MAX_DIM 16
typedef struct {
  bk_encoder enc;            /* one chunk's parameters; src, out, sizes, needs unused */
  int32_t ndim;
  int64_t shape[BK_ARRAY_MAX_DIM], chunkshape[BK_ARRAY_MAX_DIM], blockshape[BK_ARRAY_MAX_DIM];
  int32_t first;
  int32_t overhead, destsize, raw_only;
  const uint8_t *headers;
  const uint8_t *array;      /* the items in C order */
  size_t array_len;
  uint8_t *out;              /* one slot of chunk_cap bytes per chunk */
  int64_t chunk_cap;
  int32_t *sizes;            /* per chunk: its length in its slot */
} bk_array_encoder;
int bk_encode_array_chunks(const bk_array_encoder *a, int32_t nchunks, int nthreads);

/* parallel.c, tests only: make the next `count` worker set-ups fail as if
 * out of memory (0 turns it off) */
void bk_test_fail_worker_setups(int count);

/* fastpath.c: header, checks and decode of a common chunk in one call.
 *
 * bk_read_header: the 16-byte header and, when the flags say so, the 32-byte
 * extended one (version 3's alpha layout included) into h; returns the
 * header length read, or 0 when len is too short for it. */
typedef struct {
  int version, versionlz, flags, typesize;
  int32_t nbytes, blocksize, cbytes;
  int extended;              /* 0: only the first 16 bytes are filled */
  uint8_t filters[BK_CHUNK_EXTENDED_FILTERS_COUNT];
  uint8_t filters_meta[BK_CHUNK_EXTENDED_FILTERS_META_COUNT];
  int udcodec, compcode_meta, flags2, b2flags;
} bk_header;
int bk_read_header(const uint8_t *src, size_t len, bk_header *h);

/* The codecs the fast path may call, indexed by the chunk's codec format;
 * kind BK_KIND_NONE where there is none. */
typedef struct {
  int kind;
  void *fn, *fn_dict, *fn_error, *fn_new, *fn_free, *fn_begin, *fn_end;
} bk_codec_entry;
typedef struct {
  bk_codec_entry by_format[BK_CHUNK_HEADER_FLAGS_COMPFORMAT_MASK + 1];
} bk_codec_table;

enum {
  BK_FAST_DONE = 0,      /* decoded (or, without dst, checked): *nbytes set */
  BK_FAST_DECLINED = 1,  /* not a case the fast path handles */
  BK_FAST_REJECTED = 2,  /* breaks a rule: the Python reader explains which */
  BK_FAST_NOMEM = 3,
  BK_FAST_SMALL_DST = 4  /* dst shorter than nbytes (*nbytes set) */
};
/* dst NULL: apply every check but decode nothing.  nbytes (may be NULL)
 * receives the chunk's nbytes once the checks pass.  Chunks are at most
 * 2 GiB - 1, so max_nbytes is an int32. */
int bk_fast_decompress(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                       int32_t max_nbytes, int nthreads, const bk_codec_table *table,
                       int32_t *nbytes);
int bk_fast_decompress_at(const uint8_t *src, size_t srclen, uintptr_t dst, size_t dstlen,
                          int32_t max_nbytes, int nthreads, const bk_codec_table *table,
                          int32_t *nbytes);

/* framecheck.c: every chunk of a contiguous frame checked in one call;
 * status per chunk: OK (the reader's rules hold, the frame's size, no
 * divergence possible), SPECIAL (a special offset), PYTHON (anything else:
 * the Python validator explains it) */
enum {
  BK_CHECK_OK = 0,
  BK_CHECK_PYTHON = 1,
  BK_CHECK_SPECIAL = 2
};
void bk_check_chunks(const uint8_t *section, int64_t len, const int64_t *offsets, int32_t n,
                     int32_t chunksize, int64_t last_nbytes, const bk_codec_table *table,
                     uint8_t *scratch, size_t scratch_len, uint8_t *status);
void bk_decode_chunks(const uint8_t *section, int64_t len, const int64_t *offsets, int32_t n,
                      int32_t chunksize, int64_t last_nbytes, const bk_codec_table *table,
                      int nthreads, uint8_t *dst, uint8_t *status);
int bk_beyond_divergences(const uint8_t *chunk, size_t len);

/* fastpath.c: the checks of bk_fast_decompress without decoding; on
 * BK_FAST_DONE, c is ready for bk_decode_block_to (its dst unset), body
 * says how the data are stored (memcpyed: at src + BK_CHUNK_EXTENDED_END)
 * and stored_blocksize is the header's (c->blocksize is clamped to nbytes). */
enum { BK_BODY_EMPTY = 0, BK_BODY_MEMCPYED = 1, BK_BODY_BLOCKS = 2 };
int bk_fast_prepare(const uint8_t *src, size_t srclen, int32_t max_nbytes,
                    const bk_codec_table *table, bk_chunk *c, int *body,
                    int32_t *stored_blocksize);
/* chunkdec.c: block j of a checked chunk into dst (s1, s2: blocksize bytes
 * of scratch each); 0, or -1 when the block does not decode.  Not with
 * delta (its blocks refer to c->dst). */
int bk_decode_block_to(const bk_chunk *c, int32_t j, uint8_t *dst, uint8_t *s1, uint8_t *s2,
                       void *zctx);

/* b2ndread.c: chunks of a b2nd array decoded block by block straight into
 * the array (or a region of it), parallel over blocks (see the file). */
typedef struct {
  const uint8_t *section;    /* chunk i starts at section + offsets[i] */
  int64_t section_len;
  const int64_t *offsets;    /* nchunks entries; the special bit: left to Python */
  int32_t nchunks;
  int32_t nblocks;           /* blocks per chunk */
  int32_t block_bytes;       /* every chunk holds nblocks blocks of this size */
  const int64_t *bases;      /* per chunk: its runs' output offsets move by this */
  int64_t base_shift;        /* added to every base */
  const int32_t *chunk_plan; /* per chunk: the index of its plan */
  const int32_t *block_runs; /* per plan, nblocks + 1 run indexes: block j's runs */
  int32_t nplans;
  const int64_t *runs;       /* BK_RUN_FIELDS int64 each, as copy_runs (chunk offsets in the chunk) */
  int64_t nruns;
  uint8_t *out;
  int64_t out_len;
  const bk_codec_table *table;
  int decode_all;            /* decode the blocks without runs too (into scratch) */
  uint8_t *status;           /* out, per chunk: BK_CHECK_OK, _PYTHON or _SPECIAL */
  int64_t blocks_read;       /* out: blocks decoded (or copied, memcpyed) */
} bk_b2nd_job;
/* 0; BK_EPARAM when the plan leaves a block or the output (nothing
 * written then); BK_ENOMEM.  out NULL: each chunk's status only. */
int bk_b2nd_read(bk_b2nd_job *job, int nthreads);

/* framebuild.c: the leading run of n chunks a fixed-size frame stores as
 * they are (heads: each chunk's first BK_CHUNK_EXTENDED_END bytes, end to
 * end; lens: their lengths); offsets[i] = cbytes + the lengths before i.
 * Returns the run's length. */
int32_t bk_plain_chunks(const uint8_t *heads, int64_t heads_len, const int64_t *lens, int32_t n,
                        int64_t nbytes, int vl_blocks, const uint8_t *odd_versions,
                        int64_t cbytes, int64_t *offsets);
