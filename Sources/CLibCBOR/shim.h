#ifndef PEERNOTE_CLIBCBOR_SHIM_H
#define PEERNOTE_CLIBCBOR_SHIM_H
#include <cbor.h>
#endif
