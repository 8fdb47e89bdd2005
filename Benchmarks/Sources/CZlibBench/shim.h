#ifndef PEERNOTE_CZLIBBENCH_SHIM_H
#define PEERNOTE_CZLIBBENCH_SHIM_H
#include <zlib.h>
#endif
