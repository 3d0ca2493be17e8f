/**
 * {@code readygate check}: a one-shot command in the same jar that runs every probe once against a live engine and
 * prints what readygate can see of it, what the probes measured, and whether readygate would gate it correctly.
 */
@NullMarked
package dev.readygate.check;

import org.jspecify.annotations.NullMarked;
