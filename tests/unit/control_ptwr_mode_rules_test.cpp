#include "control/ptwr_mode_rules.h"

#include <gtest/gtest.h>

#include "control/control_abi.h"
#include "control/domctl_rules.h"

namespace {
using namespace control;
namespace abi = pvhv::xen_abi;

abi::DomctlPtwrMode request(uint32_t op, uint32_t mode) { return abi::DomctlPtwrMode{op, mode, {0, 0}}; }

TEST(PtwrModeRules, TheNumberIsOutsideXensAndServed) {
  EXPECT_FALSE(domctl_known_to_xen(abi::kDomctlPtwrMode));
  EXPECT_TRUE(domctl_served(abi::kDomctlPtwrMode));
  EXPECT_TRUE(domctl_copies_back(abi::kDomctlPtwrMode)) << "the mode goes back to the caller";
  EXPECT_TRUE(needs_existing_domain(abi::kDomctlPtwrMode));
}

// do_domctl's admission comes first: a domU gets -EPERM, a missing domain -ESRCH.
TEST(PtwrModeRules, AdmissionIsDomctls) {
  EXPECT_EQ(domctl_admission(XEN_DOMCTL_INTERFACE_VERSION, abi::kDomctlPtwrMode, true, false), -XEN_EPERM);
  EXPECT_EQ(domctl_admission(XEN_DOMCTL_INTERFACE_VERSION, abi::kDomctlPtwrMode, false, true), -XEN_ESRCH);
  EXPECT_EQ(domctl_admission(XEN_DOMCTL_INTERFACE_VERSION - 1, abi::kDomctlPtwrMode, true, true), -XEN_EACCES);
  EXPECT_EQ(domctl_admission(XEN_DOMCTL_INTERFACE_VERSION, abi::kDomctlPtwrMode, true, true), 0);
}

TEST(PtwrModeRules, GetReportsWhateverTheModeField) {
  for (uint32_t current : {abi::kPtwrEmulate, abi::kPtwrWritable, abi::kPtwrAdaptive}) {
    PtwrModeDecision d = decide_ptwr_mode(request(abi::kPtwrModeGet, 12345), current, false);
    EXPECT_EQ(d.error, 0);
    EXPECT_EQ(d.action, PtwrModeAction::report);
  }
  EXPECT_EQ(decide_ptwr_mode(request(abi::kPtwrModeGet, 0), abi::kPtwrWritable, true).error, 0)
      << "a dying domain can be read";
}

TEST(PtwrModeRules, TransitionsAndNoChange) {
  constexpr uint32_t emulate = abi::kPtwrEmulate, writable = abi::kPtwrWritable, adaptive = abi::kPtwrAdaptive;
  auto action = [](uint32_t from, uint32_t to) {
    return decide_ptwr_mode(request(abi::kPtwrModeSet, to), from, false).action;
  };
  EXPECT_EQ(action(emulate, writable), PtwrModeAction::enable_writable);
  EXPECT_EQ(action(emulate, adaptive), PtwrModeAction::enable_writable) << "adaptive detaches too";
  EXPECT_EQ(action(writable, emulate), PtwrModeAction::rehook_to_emulate);
  EXPECT_EQ(action(adaptive, emulate), PtwrModeAction::rehook_to_emulate);
  EXPECT_EQ(action(writable, adaptive), PtwrModeAction::switch_detaching);
  EXPECT_EQ(action(adaptive, writable), PtwrModeAction::switch_detaching);
  for (uint32_t mode : {emulate, writable, adaptive}) EXPECT_EQ(action(mode, mode), PtwrModeAction::report) << mode;
}

TEST(PtwrModeRules, GarbageIsEinval) {
  EXPECT_EQ(decide_ptwr_mode(request(2, 0), abi::kPtwrEmulate, false).error, -XEN_EINVAL) << "unknown op";
  EXPECT_EQ(decide_ptwr_mode(request(0xffffffff, 0), abi::kPtwrEmulate, false).error, -XEN_EINVAL);
  EXPECT_EQ(decide_ptwr_mode(request(abi::kPtwrModeSet, 3), abi::kPtwrEmulate, false).error, -XEN_EINVAL)
      << "unknown mode";
  EXPECT_EQ(decide_ptwr_mode(request(abi::kPtwrModeSet, 0xffffffff), abi::kPtwrWritable, false).error, -XEN_EINVAL);
  abi::DomctlPtwrMode reserved = request(abi::kPtwrModeGet, 0);
  reserved.reserved[1] = 1;
  EXPECT_EQ(decide_ptwr_mode(reserved, abi::kPtwrEmulate, false).error, -XEN_EINVAL) << "reserved fields must be zero";
  EXPECT_EQ(decide_ptwr_mode(request(abi::kPtwrModeSet, abi::kPtwrWritable), abi::kPtwrEmulate, true).error,
            -XEN_EINVAL)
      << "a dying domain's mode cannot change";
  EXPECT_EQ(decide_ptwr_mode(request(abi::kPtwrModeSet, abi::kPtwrAdaptive), abi::kPtwrWritable, true).error,
            -XEN_EINVAL);
}

// The kernel's PVHV note from a toolstack's builder: only while the domain is being built.
TEST(PtwrModeRules, ReadsUnhookedIsSetOnlyBeforeTheDomainRuns) {
  for (uint32_t flag : {0u, 1u}) {
    EXPECT_EQ(decide_reads_unhooked(request(abi::kPtwrReadsUnhookedSet, flag), false, false), 0) << flag;
    EXPECT_EQ(decide_reads_unhooked(request(abi::kPtwrReadsUnhookedSet, flag), false, true), -XEN_EEXIST) << flag;
  }
}

TEST(PtwrModeRules, ReadsUnhookedRefusesBadFlagsReservedFieldsAndDyingDomains) {
  for (uint32_t flag : {2u, 0xffffffffu})
    EXPECT_EQ(decide_reads_unhooked(request(abi::kPtwrReadsUnhookedSet, flag), false, false), -XEN_EINVAL) << flag;
  abi::DomctlPtwrMode reserved = request(abi::kPtwrReadsUnhookedSet, 1);
  reserved.reserved[1] = 1;
  EXPECT_EQ(decide_reads_unhooked(reserved, false, false), -XEN_EINVAL);
  EXPECT_EQ(decide_reads_unhooked(request(abi::kPtwrReadsUnhookedSet, 1), true, false), -XEN_EINVAL);
  // A bad request is -EINVAL even for a domain that has run: nothing about it is valid.
  EXPECT_EQ(decide_reads_unhooked(request(abi::kPtwrReadsUnhookedSet, 2), false, true), -XEN_EINVAL);
  EXPECT_EQ(decide_reads_unhooked(request(abi::kPtwrModeSet, 1), false, false), -XEN_EINVAL);
}

TEST(PtwrModeRules, TheModeRulesStillRefuseTheNoteOp) {
  EXPECT_EQ(decide_ptwr_mode(request(abi::kPtwrReadsUnhookedSet, 1), false, false).error, -XEN_EINVAL);
}
}  // namespace
