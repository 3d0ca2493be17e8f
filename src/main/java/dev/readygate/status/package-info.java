/**
 * How readygate shows what it knows: the {@code engine} health indicator behind {@code /readyz}, Spring Boot's
 * {@code ReadinessState} kept in step with the engine (Boot refuses traffic first on shutdown), and {@code /status}
 * (JSON for tools, a self-updating page for browsers).
 */
@NullMarked
package dev.readygate.status;

import org.jspecify.annotations.NullMarked;
