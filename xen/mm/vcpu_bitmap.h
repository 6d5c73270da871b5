// A guest's bitmap of its vCPUs, as MMUEXT_TLB_FLUSH_MULTI, MMUEXT_INVLPG_MULTI and
// update_va_mapping's UVMF_MULTI name the vCPUs whose TLBs to flush (xen.h: `vcpumask`, a pointer
// to a bitmap of unsigned longs). Pure: the caller reads the words from guest memory.
#pragma once
#include <stdint.h>

namespace mm {

// Xen's vcpumask_to_pcpumask walk: the bitmap's 64-bit words are read (read_word(index, word),
// false when the word cannot be read) while the first vCPU id a word covers is below
// `max_vcpus`, and each set bit of a vCPU id below `max_vcpus` is handed to each(id), lowest
// first. The first set bit at or beyond `max_vcpus` ends the walk (Xen returns there: later
// words are not read). Returns false when a word could not be read (the caller answers -EFAULT
// and flushes nothing: Xen clears the mask it built).
template <typename ReadWord, typename Each>
bool for_each_vcpu_in_bitmap(uint32_t max_vcpus, ReadWord read_word, Each each) {
  for (uint64_t index = 0;; ++index) {
    const uint64_t first = index * 64;
    if (first >= max_vcpus) return true;
    uint64_t word = 0;
    if (!read_word(index, word)) return false;
    while (word != 0) {
      const uint64_t id = first + static_cast<unsigned>(__builtin_ctzll(word));
      word &= word - 1;
      if (id >= max_vcpus) return true;
      each(static_cast<uint32_t>(id));
    }
  }
}

}  // namespace mm
