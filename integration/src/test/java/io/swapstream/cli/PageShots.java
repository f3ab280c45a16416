package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;

/**
 * A page as a person sees it, at a laptop's window and a narrow one: screenshots (kept in
 * {@code target/page-shots} to look at) checked for what matters. Each table row is one line; the chart of the
 * clicked row is in view without scrolling, and both of its series (wait and ready, on their log axis) show
 * in its pixels; nothing of the page is wider than the window but the table's own scroll box.
 */
final class PageShots {
    /** The chart's series colours, as the pages draw them. */
    static final int WAIT = 0x3b6fc9;
    static final int READY = 0xe07b1f;
    static final List<Dimension> SIZES = List.of(new Dimension(1366, 768), new Dimension(820, 900));

    private PageShots() {}

    /**
     * As {@link #check(WebDriver, String, String, String, List)}, the important columns unchecked.
     */
    static void check(WebDriver page, String name, String rows, String chart) throws Exception {
        check(page, name, rows, chart, List.of());
    }

    /**
     * @param important headers (their text) of columns that must show at the laptop's width, 1366 px, inside the window
     *                  (issue 58: readers, priority, state and session needed sideways scrolling); at every size each table
     *                  fits its box, with no sideways scrolling
     */
    static void check(WebDriver page, String name, String rows, String chart, List<String> important) throws Exception {
        Dimension before = page.manage().window().getSize();
        try {
            for (Dimension size : SIZES) {
                page.manage().window().setSize(size);
                Thread.sleep(300); // a layout pass
                JavascriptExecutor js = (JavascriptExecutor) page;
                // the test's own clicks on far columns scrolled the table sideways: as a reader first sees it
                js.executeScript("document.querySelectorAll('.scroll, .side').forEach(e => e.scrollLeft = 0)");
                // the rows: one line each (a wrapped row is two lines tall)
                @SuppressWarnings("unchecked")
                List<Number> heights = (List<Number>) js.executeScript("return [...document.querySelectorAll(arguments[0])].slice(0, 20)"
                        + ".map(r => r.getBoundingClientRect().height)", rows);
                double line = ((Number) js.executeScript("const td = document.querySelector(arguments[0] + ' td');"
                        + " return parseFloat(getComputedStyle(td).lineHeight) || parseFloat(getComputedStyle(td).fontSize) * 1.4;", rows))
                        .doubleValue();
                for (Number h : heights) assertTrue(h.doubleValue() < 1.8 * line + 8, name + " at " + size + ": a row " + h + " px tall, lines " + line);
                // the chart: in view as the click left the page, both series drawn
                @SuppressWarnings("unchecked")
                Map<String, Number> r = (Map<String, Number>) js.executeScript("const b = document.querySelector(arguments[0]).getBoundingClientRect();"
                        + " return {top: b.top, left: b.left, width: b.width, height: b.height, vh: innerHeight, vw: innerWidth,"
                        + " dpr: devicePixelRatio};", chart);
                double top = r.get("top").doubleValue();
                double height = r.get("height").doubleValue();
                assertTrue(top >= 0 && top + height <= r.get("vh").doubleValue() + 1, name + " at " + size + ": the chart in view: " + r);
                byte[] png = ((TakesScreenshot) page).getScreenshotAs(OutputType.BYTES);
                Path dir = Files.createDirectories(Path.of("target", "page-shots"));
                Files.write(dir.resolve(name + "-" + size.width + "x" + size.height + ".png"), png);
                // each table's width against the room it has, kept beside the screenshot
                Files.writeString(dir.resolve(name + "-" + size.width + "x" + size.height + ".txt"), String.valueOf(js.executeScript(
                        "return [...document.querySelectorAll('table[id]')].map(t => t.id + ' ' + Math.round(t.getBoundingClientRect().width)"
                        + " + ' px in ' + t.parentElement.clientWidth + ' (page ' + document.documentElement.clientWidth + ', scrolls '"
                        + " + document.documentElement.scrollWidth + ')').join('\\n')")) + "\n");
                // every table fits: no sideways scrolling, of its box or of the page (the secondary columns left out)
                @SuppressWarnings("unchecked")
                List<String> overflowing = (List<String>) js.executeScript("return [...document.querySelectorAll('table[id]')]"
                        + ".filter(t => t.getBoundingClientRect().width > t.parentElement.clientWidth + 1"
                        + " || t.parentElement.scrollWidth > t.parentElement.clientWidth + 1)"
                        + ".map(t => t.id + ' ' + Math.round(t.getBoundingClientRect().width) + ' px in ' + t.parentElement.clientWidth)"
                        + ".concat(document.documentElement.scrollWidth > document.documentElement.clientWidth + 1"
                        + " ? ['the page ' + document.documentElement.scrollWidth + ' px in ' + document.documentElement.clientWidth] : [])");
                assertTrue(overflowing.isEmpty(), name + " at " + size + ": wider than their room: " + overflowing);
                if (size.width == 1366) {
                    @SuppressWarnings("unchecked")
                    List<String> shown = (List<String>) js.executeScript("return [...document.querySelectorAll('table[id] th')]"
                            + ".filter(th => { const b = th.getBoundingClientRect(); return b.width > 0 && b.left >= 0 && b.right <= innerWidth; })"
                            + ".map(th => th.firstChild ? th.firstChild.textContent.replace('\u2011', '-').trim() : '')");
                    for (String head : important) assertTrue(shown.contains(head), name + " at " + size + ": column '" + head + "' in view: " + shown);
                }
                BufferedImage shot = ImageIO.read(new ByteArrayInputStream(png));
                double dpr = r.get("dpr").doubleValue();
                int wait = 0;
                int ready = 0;
                int x0 = (int) (r.get("left").doubleValue() * dpr);
                // below the title and the legend (whose swatches have both colours): the plot alone
                int y0 = (int) ((top + 34) * dpr);
                int x1 = Math.min(shot.getWidth(), (int) ((r.get("left").doubleValue() + r.get("width").doubleValue()) * dpr));
                int y1 = Math.min(shot.getHeight(), (int) ((top + height) * dpr));
                for (int y = Math.max(0, y0); y < y1; y++) {
                    for (int x = Math.max(0, x0); x < x1; x++) {
                        int rgb = shot.getRGB(x, y) & 0xFFFFFF;
                        if (near(rgb, WAIT)) wait++;
                        if (near(rgb, READY)) ready++;
                    }
                }
                assertTrue(wait >= 10 && ready >= 10, name + " at " + size + ": both series show in the chart's pixels (wait " + wait
                        + ", ready " + ready + ")");
            }
        } finally {
            page.manage().window().setSize(before);
        }
    }

    private static boolean near(int rgb, int colour) {
        for (int shift = 0; shift <= 16; shift += 8) {
            if (Math.abs((rgb >> shift & 0xFF) - (colour >> shift & 0xFF)) > 24) return false;
        }
        return true;
    }
}
