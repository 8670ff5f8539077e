import Mustache

/// The console's mustache templates, parsed once when the server starts. They are Swift
/// string constants (the files under `Templates/`), not resources, so an installed binary and
/// a package depending on this one by version find them. `{{name}}` escapes HTML everywhere;
/// only the layout inserts the (already rendered) page body unescaped.
struct ConsoleTemplates: Sendable {
  enum Page: String, CaseIterable, Sendable {
    case signIn, message, overview, beacons, register, beacon, namespaces, keys, live

    var text: String {
      switch self {
      case .signIn: ConsoleSignInTemplate.text
      case .message: ConsoleMessageTemplate.text
      case .overview: ConsoleOverviewTemplate.text
      case .beacons: ConsoleBeaconsTemplate.text
      case .register: ConsoleRegisterTemplate.text
      case .beacon: ConsoleBeaconTemplate.text
      case .namespaces: ConsoleNamespacesTemplate.text
      case .keys: ConsoleKeysTemplate.text
      case .live: ConsoleLiveTemplate.text
      }
    }
  }

  private let library: MustacheLibrary

  /// - Throws: a template that does not parse (a programming error, caught by the tests).
  init() throws {
    var library = MustacheLibrary()
    try library.register(ConsoleLayoutTemplate.text, named: "layout")
    for page in Page.allCases { try library.register(page.text, named: page.rawValue) }
    self.library = library
  }

  /// The whole HTML page: `page` rendered with `values`, in the layout. `project` and `csrf`
  /// are the signed-in session's (nil: no navigation).
  func render(
    _ page: Page, title: String, values: [String: Any], project: String?, csrf: String?
  ) -> String {
    var values = values
    values["csrf"] = csrf ?? ""
    let body = library.render(values, withTemplate: page.rawValue) ?? ""
    var layout: [String: Any] = ["title": title, "body": body, "csrf": csrf ?? ""]
    if let project { layout["project"] = project }
    return library.render(layout, withTemplate: "layout") ?? body
  }
}
