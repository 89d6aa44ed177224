// Shared by every kernel file: the reference's numeric primitives and addressing, compiled for
// the device from the same source as the host (ref/*.h), so the two cannot drift apart.
#pragma once

#include "../ref/addr.h"
#include "../ref/bf16.h"
#include "../ref/cr_trig.h"
#include "../ref/fp8.h"
#include "../ref/rsqrt_cr.h"
#include "../ref/tree.h"
#include "grid_dep.cuh"
#include "params.h"
#include "tree.cuh"
#include "cvt.cuh"
#include "rope_cs.cuh"
