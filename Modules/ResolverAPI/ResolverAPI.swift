// The resolver's HTTP API, generated at build time from openapi.yaml (the file beside this one,
// the one source of the contract) by swift-openapi-generator (types, the server protocol and the
// client): used by the server (NearbyServer) and the library's client (ServerResolver).
