/* The libFuzzer entry point of one target, chosen at compile time (-DFZ_ENTRY=fz_name). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return FZ_ENTRY(data, size); }
