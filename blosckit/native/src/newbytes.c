/* The four shuffle kernels with the output given as an address.
 *
 * Python allocates an uninitialised bytes object and passes where its
 * storage starts as a plain integer: converting an int costs cffi far less
 * than wrapping the object in a buffer, and the kernels then write the
 * result straight into the object they return (no zeroing, no extra copy).
 */
#include "blosckit_native.h"

int bk_shuffle_at(const uint8_t *src, uintptr_t dst, size_t len, size_t typesize)
{
    return bk_shuffle(src, (uint8_t *)dst, len, typesize);
}

int bk_unshuffle_at(const uint8_t *src, uintptr_t dst, size_t len, size_t typesize)
{
    return bk_unshuffle(src, (uint8_t *)dst, len, typesize);
}

int bk_bitshuffle_at(const uint8_t *src, uintptr_t dst, size_t len, size_t typesize, int legacy)
{
    return bk_bitshuffle(src, (uint8_t *)dst, len, typesize, legacy);
}

int bk_bitunshuffle_at(const uint8_t *src, uintptr_t dst, size_t len, size_t typesize,
                       int legacy)
{
    return bk_bitunshuffle(src, (uint8_t *)dst, len, typesize, legacy);
}
