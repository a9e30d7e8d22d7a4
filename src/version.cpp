// vkprim::version(): the library's version, from the header CMake generates (include/vkprim/version.hpp.in).
#include "vkprim/version.hpp"

namespace vkprim {

Version version() {
  return Version{VKPRIM_VERSION_MAJOR, VKPRIM_VERSION_MINOR, VKPRIM_VERSION_PATCH, VKPRIM_VERSION_STRING};
}

}  // namespace vkprim
