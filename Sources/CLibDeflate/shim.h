#ifndef PEERNOTE_CLIBDEFLATE_SHIM_H
#define PEERNOTE_CLIBDEFLATE_SHIM_H
#include <libdeflate.h>
#endif
