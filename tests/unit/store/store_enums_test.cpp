#include <set>
#include <string>

#include <gtest/gtest.h>

#include "store/job_status.h"
#include "store/session_status.h"
#include "store/transition_result.h"
#include "store/version_state.h"

namespace crank::store {
namespace {

TEST(StoreEnumsTest, SessionStatusNamesRoundTripAndAreDistinct) {
    std::set<std::string> names;
    for (SessionStatus status : kSessionStatuses) {
        const std::string name(sessionStatusName(status));
        EXPECT_EQ(parseSessionStatus(name), status) << name;
        names.insert(name);
    }
    EXPECT_EQ(names, (std::set<std::string>{"active", "paused", "closed", "expired", "failed"}));
    EXPECT_FALSE(parseSessionStatus("ACTIVE").has_value());
    EXPECT_FALSE(parseSessionStatus("").has_value());
}

TEST(StoreEnumsTest, SessionTerminalStatuses) {
    EXPECT_FALSE(isTerminal(SessionStatus::active));
    EXPECT_FALSE(isTerminal(SessionStatus::paused));
    EXPECT_TRUE(isTerminal(SessionStatus::closed));
    EXPECT_TRUE(isTerminal(SessionStatus::expired));
    EXPECT_TRUE(isTerminal(SessionStatus::failed));
}

TEST(StoreEnumsTest, JobStatusNamesRoundTripAndAreDistinct) {
    std::set<std::string> names;
    for (JobStatus status : kJobStatuses) {
        const std::string name(jobStatusName(status));
        EXPECT_EQ(parseJobStatus(name), status) << name;
        names.insert(name);
    }
    EXPECT_EQ(names, (std::set<std::string>{"queued", "running", "succeeded", "failed", "cancelled",
                                            "interrupted"}));
    EXPECT_FALSE(parseJobStatus("canceled").has_value());
}

TEST(StoreEnumsTest, JobTerminalStatuses) {
    EXPECT_FALSE(isTerminal(JobStatus::queued));
    EXPECT_FALSE(isTerminal(JobStatus::running));
    EXPECT_TRUE(isTerminal(JobStatus::succeeded));
    EXPECT_TRUE(isTerminal(JobStatus::failed));
    EXPECT_TRUE(isTerminal(JobStatus::cancelled));
    EXPECT_TRUE(isTerminal(JobStatus::interrupted));
}

TEST(StoreEnumsTest, VersionStateNamesRoundTrip) {
    std::set<std::string> names;
    for (VersionState state : kVersionStates) {
        const std::string name(versionStateName(state));
        EXPECT_EQ(parseVersionState(name), state) << name;
        names.insert(name);
    }
    EXPECT_EQ(names, (std::set<std::string>{"draft", "published", "archived"}));
    EXPECT_FALSE(parseVersionState("deleted").has_value());
}

TEST(StoreEnumsTest, TransitionOutcomeNames) {
    EXPECT_EQ(transitionOutcomeName(TransitionOutcome::applied), "applied");
    EXPECT_EQ(transitionOutcomeName(TransitionOutcome::status_mismatch), "status_mismatch");
    EXPECT_EQ(transitionOutcomeName(TransitionOutcome::not_found), "not_found");
}

}  // namespace
}  // namespace crank::store
