#pragma once
#include "abi/xen_abi.h"

namespace mm {

inline constexpr unsigned kPageShift = 12;
inline constexpr uint64_t kPageBytes = uint64_t{1} << kPageShift;

// All of machine memory as one linear window: the hypervisor passes its direct map, host
// tests pass an aligned heap array. Frames are addressed by machine frame number (MFN).
struct MachineMemory {
  uint8_t* base = nullptr;
  uint64_t nr_frames = 0;

  constexpr bool contains(uint64_t mfn) const { return mfn < nr_frames; }
  uint8_t* frame(uint64_t mfn) const { return base + (mfn << kPageShift); }
};

}  // namespace mm
