#include "mm/mm_locks.h"

namespace mm {

namespace detail {
LockHooks lock_hooks{};
}  // namespace detail

void set_lock_hooks(const LockHooks& hooks) { detail::lock_hooks = hooks; }

}  // namespace mm
