#pragma once
#include "mm/page_info.h"

namespace mm {

// One PageInfo per machine frame plus the memory those frames live in. The storage belongs
// to the caller (the hypervisor's boot allocator, or a vector in tests).
class FrameTable {
public:
    FrameTable(PageInfo* infos, uint64_t nr_frames, MachineMemory memory)
        : infos_(infos), nr_frames_(nr_frames), memory_(memory) {}

    uint64_t size() const { return nr_frames_; }
    bool contains(uint64_t mfn) const { return mfn < nr_frames_ && memory_.contains(mfn); }

    // nullptr when the frame is outside the table: callers must treat that as "no such frame".
    PageInfo* find(uint64_t mfn) { return contains(mfn) ? &infos_[mfn] : nullptr; }
    const PageInfo* find(uint64_t mfn) const { return contains(mfn) ? &infos_[mfn] : nullptr; }
    // Precondition: contains(mfn).
    PageInfo& info(uint64_t mfn) { return infos_[mfn]; }
    const PageInfo& info(uint64_t mfn) const { return infos_[mfn]; }

    const MachineMemory& memory() const { return memory_; }

    // Marks every frame free and unowned.
    void reset();
    // Called when a frame's last general reference goes (put_page), with the owner it had:
    // the hypervisor gives a guest domain's frame back to its allocator there (Xen's
    // free_domheap_page). Unset in the unit tests unless a test installs one.
    struct ReleaseHook {
        void (*released)(uint64_t mfn, domid_t owner) = nullptr;
    };
    void set_release_hook(ReleaseHook hook) { release_hook_ = hook; }
    void released(uint64_t mfn, domid_t owner) const {
        if (release_hook_.released != nullptr) release_hook_.released(mfn, owner);
    }

    // Hands a free frame to `owner`; the allocation holds one general ref (Xen's
    // PGC_allocated). Returns false if the frame does not exist or is in use.
    bool assign(uint64_t mfn, domid_t owner);

private:
    PageInfo* infos_;
    uint64_t nr_frames_;
    MachineMemory memory_;
    ReleaseHook release_hook_{};
};

}  // namespace mm
