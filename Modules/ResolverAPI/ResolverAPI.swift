// The resolver's HTTP API, generated at build time from Tools/Server/openapi.yaml (linked here) by
// swift-openapi-generator (types, the server protocol and the client): the one source for the
// server (NearbyServer) and the library's client (ServerResolver).
