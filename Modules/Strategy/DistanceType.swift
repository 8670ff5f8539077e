/// How near another device must be to count as nearby.
public enum DistanceType: String, Sendable, Hashable, Codable, CaseIterable {
  /// Whatever the mediums can reach (the default).
  case `default`
  /// Within earshot: only audio sightings count. Valid only with the audio medium.
  case earshot
}
