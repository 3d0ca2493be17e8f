/** The {@code demo} profile: readygate wired to an embedded vLLM simulator. */
@NullMarked
package dev.readygate.demo;

import org.jspecify.annotations.NullMarked;
