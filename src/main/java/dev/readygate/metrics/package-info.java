/** Every readygate meter: names, tags and registration in one place. */
@NullMarked
package dev.readygate.metrics;

import org.jspecify.annotations.NullMarked;
