// vkprim/vkprim.hpp — every public vkprim header.
#pragma once

#include "vkprim/context.hpp"
#include "vkprim/device.hpp"
#include "vkprim/reduce.hpp"
#include "vkprim/result.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/select.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/types.hpp"
#include "vkprim/version.hpp"
