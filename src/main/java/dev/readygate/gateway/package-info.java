/**
 * Gateway mode (opt-in, {@code readygate.gateway.enabled}): the engine's OpenAI-compatible routes proxied on a traffic
 * port of its own, with its own event loops and connection budget, apart from readygate's port.
 */
@NullMarked
package dev.readygate.gateway;

import org.jspecify.annotations.NullMarked;
