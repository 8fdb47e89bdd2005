#ifndef PEERNOTE_CZLIB_SHIM_H
#define PEERNOTE_CZLIB_SHIM_H
#include <zlib.h>
#endif
