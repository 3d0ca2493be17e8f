/** Every readygate meter: the names in one place ({@code MeterNames}), registered by one binder per domain. */
@NullMarked
package dev.readygate.metrics;

import org.jspecify.annotations.NullMarked;
