/// The version of Nearby for Linux: the one place it is written. `nearby --version`,
/// `nearby-server --version` and `nearby-restore --version` print it;
/// `Tools/scripts/package-deb.sh` reads it from this file for the Debian packages' version, and a
/// release is tagged with it. Change it here only.
public enum NearbyVersion {
  /// The version, `MAJOR.MINOR.PATCH` (semantic versioning, as the tags an app depends on).
  public static let current = "0.1.0"
}
