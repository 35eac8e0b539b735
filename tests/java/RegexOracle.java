// What java.util.regex says of filter regexes, for tests/check_regex_java.c.
//
// Reads lines "PATTERN NAME..." (each field the hex of its UTF-8 bytes, a
// lone "-" for an empty one) and answers each with one line: "err" when
// Pattern.compile refuses the pattern, else "ok" and, for each name, 1 or 0
// as Pattern.compile(p).matcher(name).matches() says, or x when matching
// threw (a StackOverflowError on a deep backtrack).
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

public final class RegexOracle {
    private static String unhex(String h) {
        if (h.equals("-"))
            return "";
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++)
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return new String(b, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII));
        for (String line; (line = in.readLine()) != null;) {
            String[] f = line.split(" ");
            Pattern p;
            try {
                p = Pattern.compile(unhex(f[0]));
            } catch (PatternSyntaxException e) {
                out.write("err\n");
                continue;
            } catch (RuntimeException | StackOverflowError e) {
                out.write("err\n");
                continue;
            }
            StringBuilder sb = new StringBuilder("ok");
            for (int i = 1; i < f.length; i++) {
                String r;
                try {
                    r = p.matcher(unhex(f[i])).matches() ? "1" : "0";
                } catch (RuntimeException | StackOverflowError e) {
                    r = "x";
                }
                sb.append(' ').append(r);
            }
            out.write(sb.append('\n').toString());
        }
        out.flush();
    }
}
