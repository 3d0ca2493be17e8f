package dev.readygate.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class MeterNamesTests {

    static List<String> names() {
        return Arrays.stream(MeterNames.class.getDeclaredFields())
                .filter(field -> Modifier.isStatic(field.getModifiers()) && field.getType() == String.class)
                .map(MeterNamesTests::value)
                .toList();
    }

    @Test
    void everyNameIsReadygatesDottedAndLowerCase() {
        assertThat(names()).hasSize(46).allSatisfy(name -> assertThat(name).matches("readygate(\\.[a-z]+)+"));
    }

    @Test
    void noTwoMetersShareAName() {
        assertThat(names()).doesNotHaveDuplicates();
    }

    private static String value(Field field) {
        try {
            return (String) field.get(null);
        } catch (IllegalAccessException ex) {
            throw new AssertionError(ex);
        }
    }
}
