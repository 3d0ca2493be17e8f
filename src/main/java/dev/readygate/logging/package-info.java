/**
 * readygate's log output: every line through the redaction policy, and repeated warnings rate-limited with a count.
 */
@NullMarked
package dev.readygate.logging;

import org.jspecify.annotations.NullMarked;
