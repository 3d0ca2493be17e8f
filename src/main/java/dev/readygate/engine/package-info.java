/**
 * The engine client: readygate's only way to talk to the vLLM engine, over HTTP, with timeouts, bounded bodies and
 * every transport failure mapped to a named {@link dev.readygate.engine.EngineFailure}.
 */
@NullMarked
package dev.readygate.engine;

import org.jspecify.annotations.NullMarked;
