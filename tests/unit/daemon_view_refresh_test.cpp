// pvhvd's rule for reading the domain list (tools/daemon/view_refresh.h): on VIRQ_DOM_EXC, at the
// safety interval, every tick without the VIRQ, one read at a time, and an exception during a
// read followed by another read.
#include <gtest/gtest.h>

#include "tools/daemon/view_refresh.h"

namespace {
using pvhv::daemon::ViewRefresh;

TEST(DaemonViewRefresh, WatchingReadsOnExceptionsAndAtTheSafetyInterval) {
  ViewRefresh r(10000);
  r.set_watching(true);
  EXPECT_TRUE(r.due(0));  // the first read
  r.begin(0);
  r.end();
  EXPECT_FALSE(r.due(500));  // a tick with nothing new: no read (no poll)
  EXPECT_FALSE(r.due(9999));
  EXPECT_TRUE(r.due(10000));  // the safety read
  r.begin(10000);
  r.end();
  r.exception();
  EXPECT_TRUE(r.stale());
  EXPECT_TRUE(r.due(10001));
  r.begin(10001);
  EXPECT_FALSE(r.stale());
  r.end();
  EXPECT_FALSE(r.due(10002));
}

TEST(DaemonViewRefresh, AnExceptionDuringAReadIsFollowedByAnother) {
  ViewRefresh r(10000);
  r.set_watching(true);
  r.begin(0);
  r.exception();           // after the read began: what it reads may not show it
  EXPECT_FALSE(r.due(1));  // one read at a time
  r.end();
  EXPECT_TRUE(r.stale());
  EXPECT_TRUE(r.due(2));
  r.begin(2);
  // A burst: several exceptions while the next read runs make one more read, not several.
  r.exception();
  r.exception();
  r.exception();
  r.end();
  EXPECT_TRUE(r.due(3));
  r.begin(3);
  r.end();
  EXPECT_FALSE(r.due(4));
}

TEST(DaemonViewRefresh, WithoutTheVirqEveryTickReads) {
  ViewRefresh r(10000);
  r.set_watching(false);
  for (uint64_t t = 0; t < 5000; t += 500) {
    EXPECT_TRUE(r.due(t));
    r.begin(t);
    EXPECT_FALSE(r.due(t));
    r.end();
  }
}
}  // namespace
