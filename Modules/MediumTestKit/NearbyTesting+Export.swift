// A medium's tests import MediumTestKit alone and use ManualClock, the bounded waits and the
// recorders through it (the conformance suite is built on them, and apps by version already
// name them from here): NearbyTesting comes with this kit.
@_exported public import NearbyTesting
