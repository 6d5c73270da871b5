// FPU/SSE enablement: guests (and musl-built user programs) use SSE, so the CPU must have
// CR4.OSFXSR/OSXMMEXCPT set and CR0.EM clear. One guest vCPU runs, so no FPU state is switched.
#pragma once

namespace fpu {
void init();
}
