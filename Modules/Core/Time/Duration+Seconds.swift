extension Duration {
  /// This duration in seconds, as a `Double` (a `TimeInterval`): for the arithmetic and APIs
  /// that count in seconds, and for figures. Shared by the package's modules so that there is
  /// one conversion, not one per module.
  package var seconds: Double {
    let (whole, fraction) = components
    return Double(whole) + Double(fraction) / 1e18
  }
}
