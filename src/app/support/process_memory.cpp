#include "pdsp/app/process_memory.hpp"

#include <fstream>
#include <string>

namespace pdsp {

int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 12, '\n');
  }
  return -1;
}

}  // namespace pdsp
