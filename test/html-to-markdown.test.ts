import { describe, expect, it } from 'vitest';
import { htmlToMarkdown } from '../plugins/web/html-to-markdown.js';

const page = (body: string, head = '<title>Example Page</title>') =>
  `<!DOCTYPE html><html><head>${head}<style>body { color: red }</style></head><body>${body}</body></html>`;

const siteChrome = `
  <header><a href="/">Site Logo</a><nav><a href="/products">Products</a><a href="/pricing">Pricing</a></nav></header>
  <div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience. <button>Accept all</button></div>
  <aside class="sidebar"><h3>Related posts</h3><a href="/other">Other post</a></aside>
  <footer><p>Copyright 2024 Example Inc.</p><a href="/imprint">Imprint</a></footer>
  <script>window.tracking = "SCRIPT-TEXT";</script>
  <noscript>Enable JavaScript</noscript>`;

describe('htmlToMarkdown', () => {
  it('keeps the main content and drops navigation, header, footer, sidebar, scripts, forms and cookie banners', () => {
    const html = page(`${siteChrome}
      <main>
        <h1>Installing the tool</h1>
        <p>Run the installer, then <strong>restart</strong> your shell.</p>
        <form action="/search"><label>Search the docs</label><input name="q"><button>Go</button></form>
      </main>`);
    const result = htmlToMarkdown(html, { url: 'https://docs.example.com/install' });
    expect(result.title).toBe('Example Page');
    expect(result.markdown).toBe('# Installing the tool\n\nRun the installer, then **restart** your shell.');
    for (const chrome of ['Site Logo', 'Products', 'cookies', 'Related posts', 'Copyright', 'SCRIPT-TEXT', 'Enable JavaScript', 'Search the docs', 'color: red']) {
      expect(result.markdown).not.toContain(chrome);
    }
  });

  it("prefers a lone article and keeps the article's own header with its title", () => {
    const html = page(`${siteChrome}
      <div class="layout"><article>
        <header><h1>Release 2.0</h1><p class="byline">By Ada</p></header>
        <p>Version 2.0 adds streaming.</p>
        <footer>Share this post</footer>
      </article></div>`);
    const { markdown } = htmlToMarkdown(html);
    expect(markdown).toBe('# Release 2.0\n\nBy Ada\n\nVersion 2.0 adds streaming.');
  });

  it('converts headings, nested lists, tables, code blocks and emphasis', () => {
    const html = page(`<main>
      <h2>Steps</h2>
      <ol start="3"><li>Download</li><li>Unpack<ul><li>on Linux: tar</li><li>on Windows: zip</li></ul></li></ol>
      <h3>Prices</h3>
      <table>
        <caption>Plans</caption>
        <thead><tr><th>Plan</th><th>Price</th></tr></thead>
        <tbody><tr><td>Basic | Lite</td><td>$5</td></tr><tr><td><a href="/pro">Pro</a></td><td>$20<br>per month</td></tr><tr><td>Team</td></tr></tbody>
      </table>
      <pre><code class="language-python">def greet():
    print("\`\`\` fence inside")</code></pre>
      <pre>plain   preformatted</pre>
      <p>Some <em>emphasis</em>, <del>old</del> and <code>inline()</code>.</p>
    </main>`);
    const { markdown } = htmlToMarkdown(html, { url: 'https://shop.example.com/plans/' });
    expect(markdown).toContain('## Steps\n\n3. Download\n4. Unpack\n   - on Linux: tar\n   - on Windows: zip');
    expect(markdown).toContain(
      'Plans\n\n| Plan | Price |\n| --- | --- |\n| Basic \\| Lite | $5 |\n| [Pro](https://shop.example.com/pro) | $20 per month |\n| Team |  |',
    );
    expect(markdown).toContain('````python\ndef greet():\n    print("``` fence inside")\n````');
    expect(markdown).toContain('```\nplain   preformatted\n```');
    expect(markdown).toContain('Some _emphasis_, ~~old~~ and `inline()`.');
  });

  it('makes links and images absolute, resolving against the page URL or its <base>, and lists the links once each', () => {
    const body = `<main>
      <p><a href="guide/start.html">Start</a>, <a href="../about">About</a>, <a href="https://other.example.org/x">Other</a>,
      <a href="javascript:alert(1)">Script link</a>, <a href="guide/start.html">Start again</a>, <a href="#top">Top</a></p>
      <img src="/img/diagram.png" alt="Architecture diagram"><img src="/img/spacer.gif"><img src="data:image/png;base64,AAAA" alt="inline">
    </main>`;
    const result = htmlToMarkdown(page(body), { url: 'https://example.com/docs/index.html' });
    expect(result.markdown).toContain('[Start](https://example.com/docs/guide/start.html)');
    expect(result.markdown).toContain('[About](https://example.com/about)');
    expect(result.markdown).toContain('Script link');
    expect(result.markdown).not.toContain('javascript:');
    expect(result.markdown).toContain('![Architecture diagram](https://example.com/img/diagram.png)');
    expect(result.markdown).not.toContain('spacer');
    expect(result.markdown).not.toContain('data:image');
    expect(result.links).toEqual([
      { text: 'Start', url: 'https://example.com/docs/guide/start.html' },
      { text: 'About', url: 'https://example.com/about' },
      { text: 'Other', url: 'https://other.example.org/x' },
    ]);

    const withBase = htmlToMarkdown(page(body, '<title>B</title><base href="https://cdn.example.net/v2/">'), { url: 'https://example.com/docs/' });
    expect(withBase.links[0].url).toBe('https://cdn.example.net/v2/guide/start.html');
  });

  it('finds the article with Readability when the page marks no main content', () => {
    const paragraph = (topic: string) =>
      `<p>The ${topic} section explains, in plain words and with examples, how the river valley formed over thousands of years, why the soil there is so fertile, and how farmers have worked it since.</p>`;
    const html = page(`
      <div class="menu"><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/contact">Contact</a></div>
      <div class="content"><h1>The river valley</h1>${['first', 'second', 'third', 'fourth', 'fifth'].map(paragraph).join('')}</div>
      <div class="widget">Subscribe to our newsletter for weekly updates</div>`);
    const { markdown } = htmlToMarkdown(html, { url: 'https://valley.example/history' });
    expect(markdown).toContain('The first section explains');
    expect(markdown).toContain('The fifth section explains');
    expect(markdown).not.toContain('About us');
  });

  it('drops hidden elements and keeps a page-wide form wrapper that holds the content', () => {
    const html = page(`<form id="form1" action="/default.aspx" method="post">
      <div style="display: none">HIDDEN-STYLE</div><div hidden>HIDDEN-ATTRIBUTE</div><span aria-hidden="true">HIDDEN-ARIA</span>
      <h1>Annual report</h1><p>${'Revenue grew in every quarter of the year. '.repeat(10)}</p>
      <input type="hidden" name="__VIEWSTATE" value="abc">
    </form>`);
    const { markdown } = htmlToMarkdown(html);
    expect(markdown).toContain('# Annual report');
    expect(markdown).toContain('Revenue grew in every quarter');
    expect(markdown).not.toMatch(/HIDDEN/);
  });

  it('takes the title from <title>, then og:title, then the first heading, and accepts a bare fragment', () => {
    expect(htmlToMarkdown(page('<p>x</p>', '<title>  Spaced\n  Title </title>')).title).toBe('Spaced Title');
    expect(htmlToMarkdown(page('<p>x</p>', '<meta property="og:title" content="From Open Graph">')).title).toBe('From Open Graph');
    const fragment = htmlToMarkdown('<h1>Fragment heading</h1><p>Just <em>a</em> fragment with <a href="/a">a link</a>.</p>', { url: 'https://example.com/' });
    expect(fragment.title).toBe('Fragment heading');
    expect(fragment.markdown).toBe('# Fragment heading\n\nJust _a_ fragment with [a link](https://example.com/a).');
  });

  it('shortens long markdown to maxCharacters, keeping the head and the tail', () => {
    const sections = Array.from({ length: 200 }, (_, index) => `<p>Paragraph number ${index} with some text in it.</p>`).join('');
    const { markdown } = htmlToMarkdown(page(`<main>${sections}</main>`), { maxCharacters: 1000 });
    expect(markdown.length).toBeLessThanOrEqual(1000);
    expect(markdown).toContain('Paragraph number 0 ');
    expect(markdown).toContain('Paragraph number 199 ');
    expect(markdown).toMatch(/characters omitted/);
  });
});
