/**
 * Evidence of how an engine start got its weights, read from what the engine leaves behind: its log (tailed through
 * rotation, parsed into vLLM's lines and kept per engine start), the preload daemon (its log, health port and
 * sockets) and the snapshot directory.
 */
@NullMarked
package dev.readygate.evidence;

import org.jspecify.annotations.NullMarked;
