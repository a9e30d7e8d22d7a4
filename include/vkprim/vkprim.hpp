// vkprim/vkprim.hpp — every public vkprim header.
#pragma once

#include "vkprim/context.hpp"
#include "vkprim/device.hpp"
#include "vkprim/histogram.hpp"
#include "vkprim/operator.hpp"
#include "vkprim/reduce.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/result.hpp"
#include "vkprim/run_length_encode.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/scan_by_key.hpp"
#include "vkprim/segmented_reduce.hpp"
#include "vkprim/select.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/types.hpp"
#include "vkprim/unique.hpp"
#include "vkprim/version.hpp"
