package dev.readygate.gateway;

/**
 * An answer the gateway gives itself instead of the engine's: which one ({@link OpenAiError}: the status and the
 * body's {@code type} and {@code code}) and the body's {@code message}.
 */
record GatewayAnswer(OpenAiError error, String message) {}
