#pragma once
// The self-tests of what a toolstack asks of the hypervisor (selftest/control/): the control
// hypercalls (domctl, sysctl, the trace buffers), a domain's life, work across domains, and what
// an unprivileged domain is refused.
#include "selftest/selftest.h"

namespace kernel {

void selftest_tbuf(SelfTest& test);          // the trace buffers as dom0's tools see them
void selftest_unprivileged(SelfTest& test);  // a domU is refused what only dom0 may do
// The control hypercalls (selftest_domctl.cpp): dom0 alone, dom0 beside domain 1, a domU.
void selftest_domctl(SelfTest& test);
void selftest_domctl_domu(SelfTest& test);
void selftest_domctl_unprivileged(SelfTest& test);
void selftest_domctl_leave_paused(SelfTest& test);
// The physical CPUs and vCPU affinity (selftest_cpuinfo.cpp): physinfo's CPU fields,
// cputopoinfo, getcpuinfo, get/setvcpuaffinity and their bad input, in dom0.
void selftest_cpuinfo(SelfTest& test);
void selftest_domctl_pause_sync(SelfTest& test);
// A domain's life (selftest_lifecycle.cpp): dom0 creates and destroys domains, destroys the
// boot domU while it runs; a boot domU is refused all of it.
void selftest_lifecycle(SelfTest& test);
void selftest_lifecycle_100(SelfTest& test);
void selftest_lifecycle_domu(SelfTest& test);
void selftest_lifecycle_unprivileged(SelfTest& test);
// Work across domains (selftest_xdom.cpp): dom0 alone, dom0 beside domain 1, domain 1.
void selftest_xdom_self(SelfTest& test);
void selftest_xdom_domu(SelfTest& test);
void selftest_xdom_peer(SelfTest& test);
void selftest_xdom_wait(SelfTest& test);

}  // namespace kernel
