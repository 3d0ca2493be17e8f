/** The redaction policy: which names are secrets, and how text, URLs and records are shown without them. */
@NullMarked
package dev.readygate.secret;

import org.jspecify.annotations.NullMarked;
