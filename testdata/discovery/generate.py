# Generates testdata/discovery/workflows/*.pflow.md (the discovery test library).
# Run from anywhere: python3 testdata/discovery/generate.py. queries.tsv is written by hand.
import os, textwrap
W = [
# name, title, description, inputs[(name,type,desc)], steps[(id,type,purpose)], outputs[(name,desc)]
("release-notes","Release notes","Draft release notes from the git commits since the last tag and group them by type.",
 [("since","string","Tag or commit to start from")],[("log","shell","List commits since the tag."),("draft","llm","Group commits into features, fixes and chores.")],[("notes","Markdown release notes")]),
("changelog-update","Update CHANGELOG.md","Prepend a new version section to CHANGELOG.md from merged pull requests.",
 [("version","string","Version being released")],[("prs","mcp-github-list-pull-requests","Merged PRs since the last release."),("write","llm","Write the changelog section."),("save","write-file","Prepend it to CHANGELOG.md.")],[("section","The new changelog section")]),
("github-issue-triage","Triage new GitHub issues","Label and prioritize newly opened GitHub issues using an LLM and post a triage comment.",
 [("repo","string","owner/name of the repository")],[("issues","mcp-github-list-issues","Open issues without labels."),("classify","llm","Pick labels and priority."),("label","mcp-github-update-issue","Apply the labels.")],[("triaged","Issues that were labelled")]),
("pr-review-summary","Summarize a pull request","Summarize the diff of a GitHub pull request and list risky changes for reviewers.",
 [("pr","integer","Pull request number"),("repo","string","owner/name")],[("diff","mcp-github-get-pull-request-diff","Fetch the diff."),("review","llm","Summarize and flag risks.")],[("summary","Review summary")]),
("slack-daily-digest","Daily Slack digest","Collect yesterday's messages from a Slack channel and post a short digest of decisions and open questions.",
 [("channel","string","Channel to digest")],[("history","mcp-slack-get-channel-history","Read yesterday's messages."),("digest","llm","Extract decisions and questions."),("post","mcp-slack-post-message","Post the digest.")],[("digest","The digest text")]),
("slack-notify-deploy","Announce a deploy in Slack","Post a formatted deployment announcement with version and author to a Slack channel.",
 [("version","string","Deployed version"),("channel","string","Slack channel")],[("post","mcp-slack-post-message","Post the announcement.")],[("ts","Message timestamp")]),
("weather-report","Weather report","Fetch the forecast for a city from a weather API and describe it in one friendly paragraph.",
 [("city","string","City name")],[("forecast","http","Call the forecast API."),("describe","llm","Describe the weather.")],[("report","Weather paragraph")]),
("translate-markdown","Translate a markdown file","Translate a markdown document into another language while keeping code blocks and links intact.",
 [("file","string","Markdown file"),("language","string","Target language")],[("read","read-file","Read the document."),("translate","llm","Translate prose only."),("write","write-file","Write the translated copy.")],[("path","Translated file path")]),
("csv-to-json","Convert CSV to JSON","Convert a CSV spreadsheet export into a JSON array of objects keyed by the header row.",
 [("file","string","CSV file")],[("read","read-file","Read the CSV."),("convert","code","Parse rows into objects.")],[("json","JSON array")]),
("json-api-monitor","Monitor a JSON API endpoint","Call an HTTP endpoint, check the status code and latency, and report whether it is healthy.",
 [("url","string","Endpoint URL")],[("call","http","Request the endpoint."),("check","code","Evaluate status and latency.")],[("healthy","true when healthy")]),
("website-uptime","Website uptime check","Check a list of websites respond with 200 and send an alert listing the ones that are down.",
 [("urls","array","Sites to check")],[("probe","http","Probe each site."),("alert","mcp-slack-post-message","Alert about down sites.")],[("down","Sites that are down")]),
("backup-postgres","Back up a Postgres database","Dump a PostgreSQL database with pg_dump, compress it and copy the archive to a backup directory.",
 [("database","string","Database name"),("dest","string","Backup directory")],[("dump","shell","Run pg_dump."),("compress","shell","gzip the dump."),("copy","copy-file","Copy the archive.")],[("archive","Path of the archive")]),
("clean-docker","Clean up Docker","Remove stopped containers, dangling images and unused volumes to free disk space.",
 [],[("prune","shell","docker system prune."),("report","shell","Show disk usage after.")],[("freed","Space reclaimed")]),
("disk-usage-report","Disk usage report","Find the largest directories under a path and produce a sorted disk usage report.",
 [("path","string","Directory to scan")],[("du","shell","Run du on the path."),("sort","shell","Sort by size.")],[("report","Largest directories")]),
("rename-photos","Rename photos by date","Rename image files in a folder to their EXIF capture date so they sort chronologically.",
 [("folder","string","Folder of photos")],[("list","shell","List jpg files."),("rename","code","Read EXIF dates and rename.")],[("renamed","Number of files renamed")]),
("image-describe","Describe an image","Use a vision model to describe what is in an image and suggest alt text.",
 [("image","string","Path or URL of the image")],[("describe","llm","Describe the image and write alt text.")],[("alt_text","Suggested alt text")]),
("youtube-transcript-summary","Summarize a YouTube video","Download the transcript of a YouTube video and summarize its key points with timestamps.",
 [("url","string","Video URL")],[("transcript","shell","Fetch the transcript with yt-dlp."),("summarize","llm","Key points with timestamps.")],[("summary","Video summary")]),
("meeting-notes","Meeting notes from transcript","Turn a meeting transcript into structured notes with decisions, action items and owners.",
 [("transcript","string","Transcript file")],[("read","read-file","Read the transcript."),("notes","llm","Extract decisions and action items.")],[("notes","Structured notes")]),
("email-inbox-summary","Summarize unread email","Summarize unread Gmail messages and highlight the ones that need a reply today.",
 [],[("unread","mcp-gmail-search-messages","Find unread mail."),("summarize","llm","Summarize and flag replies.")],[("summary","Inbox summary")]),
("send-invoice-email","Send invoice email","Render an invoice from a template and email it to a customer as a PDF attachment.",
 [("customer","string","Customer email"),("amount","number","Invoice total")],[("render","shell","Render the PDF."),("send","mcp-gmail-send-message","Email the invoice.")],[("message_id","Sent message id")]),
("calendar-agenda","Today's agenda","List today's calendar events and write a short agenda with preparation notes for each meeting.",
 [],[("events","mcp-calendar-list-events","Today's events."),("agenda","llm","Write the agenda.")],[("agenda","Agenda text")]),
("standup-report","Daily standup report","Compile my commits, closed tickets and open pull requests from yesterday into a standup update.",
 [("author","string","Git author")],[("commits","shell","git log for yesterday."),("tickets","mcp-jira-search-issues","Tickets closed yesterday."),("write","llm","Write the update.")],[("update","Standup text")]),
("jira-sprint-report","Sprint report","Summarize a Jira sprint: completed stories, carry-over and velocity.",
 [("sprint","string","Sprint id")],[("issues","mcp-jira-search-issues","Issues in the sprint."),("report","llm","Write the sprint report.")],[("report","Sprint report")]),
("dependency-audit","Audit npm dependencies","List outdated and vulnerable npm packages in a project and suggest safe upgrade commands.",
 [("dir","string","Project directory")],[("outdated","shell","npm outdated --json."),("audit","shell","npm audit --json."),("advise","llm","Suggest upgrades.")],[("advice","Upgrade advice")]),
("go-test-report","Go test failure report","Run go test, collect failing tests and explain the likely cause of each failure.",
 [("pkg","string","Package pattern")],[("test","shell","go test -json."),("explain","llm","Explain failures.")],[("report","Failures explained")]),
("ci-failure-explain","Explain a CI failure","Download the logs of a failed GitHub Actions run and explain why the build broke.",
 [("run_id","string","Workflow run id")],[("logs","mcp-github-get-workflow-run-logs","Download the logs."),("explain","llm","Find the root cause.")],[("cause","Likely root cause")]),
("deploy-staging","Deploy to staging","Build the container image, push it to the registry and roll out the new version to the staging cluster.",
 [("tag","string","Image tag")],[("build","shell","docker build."),("push","shell","docker push."),("rollout","shell","kubectl set image.")],[("status","Rollout status")]),
("k8s-pod-restarts","Find crashing pods","List Kubernetes pods with many restarts and show the last log lines of each.",
 [("namespace","string","Namespace")],[("pods","shell","kubectl get pods -o json."),("logs","shell","kubectl logs --tail.")],[("crashing","Crashing pods with logs")]),
("log-error-summary","Summarize errors in logs","Scan application log files for errors and stack traces and group them by message.",
 [("file","string","Log file")],[("grep","shell","Extract error lines."),("group","code","Group by message.")],[("groups","Error groups with counts")]),
("sql-query-report","SQL query to report","Run a SQL query against SQLite and format the rows as a markdown table.",
 [("db","string","SQLite file"),("query","string","SQL query")],[("run","shell","sqlite3 -json."),("format","code","Render a markdown table.")],[("table","Markdown table")]),
("rss-news-digest","News digest from RSS feeds","Fetch several RSS feeds, pick the most interesting articles and write a news digest.",
 [("feeds","array","Feed URLs")],[("fetch","http","Download each feed."),("pick","llm","Choose and summarize articles.")],[("digest","News digest")]),
("hacker-news-top","Top Hacker News stories","Get the top stories from Hacker News and summarize the five most discussed.",
 [],[("top","http","Top story ids."),("items","http","Story details."),("summarize","llm","Summarize the top five.")],[("summary","Summary")]),
("blog-post-draft","Draft a blog post","Write a first draft of a blog article from an outline and a target audience.",
 [("outline","string","Outline"),("audience","string","Who reads it")],[("draft","llm","Write the article.")],[("article","Draft article")]),
("tweet-thread","Tweet thread from article","Turn a long article into a thread of short tweets with a hook.",
 [("url","string","Article URL")],[("fetch","http","Download the article."),("thread","llm","Write the thread.")],[("tweets","List of tweets")]),
("readme-generator","Generate a README","Generate a README.md for a project from its source tree, package manifest and usage examples.",
 [("dir","string","Project directory")],[("tree","shell","List files."),("write","llm","Write the README."),("save","write-file","Save README.md.")],[("readme","README path")]),
("code-review-local","Review local changes","Review the uncommitted git diff and point out bugs, missing tests and style problems.",
 [],[("diff","shell","git diff."),("review","llm","Review the diff.")],[("review","Review comments")]),
("commit-message","Write a commit message","Write a conventional commit message for the staged changes.",
 [],[("diff","shell","git diff --staged."),("message","llm","Write the message.")],[("message","Commit message")]),
("stale-branches","Delete stale branches","Find git branches merged into main more than 30 days ago and delete them locally and on the remote.",
 [("days","integer","Age in days")],[("list","shell","List merged branches."),("delete","shell","Delete them.")],[("deleted","Deleted branches")]),
("pdf-extract-text","Extract text from PDF","Extract the text of a PDF document and save it as plain text.",
 [("file","string","PDF file")],[("extract","shell","pdftotext."),("save","write-file","Save the text.")],[("path","Text file path")]),
("contract-review","Review a contract","Read a contract PDF and list unusual clauses, obligations and deadlines.",
 [("file","string","Contract PDF")],[("text","shell","pdftotext."),("review","llm","List clauses and deadlines.")],[("findings","Clauses and deadlines")]),
("resize-images","Resize images","Resize all images in a folder to a maximum width and convert them to WebP.",
 [("folder","string","Image folder"),("width","integer","Max width")],[("resize","shell","ImageMagick mogrify.")],[("count","Images converted")]),
("screenshot-website","Screenshot a web page","Take a full-page screenshot of a URL with a headless browser.",
 [("url","string","Page URL")],[("shot","mcp-playwright-browser-take-screenshot","Capture the page.")],[("image","Screenshot file")]),
("scrape-product-prices","Scrape product prices","Scrape prices of products from an online shop page and save them to a CSV file.",
 [("url","string","Shop page")],[("page","http","Download the page."),("parse","code","Extract name and price."),("save","write-file","Write the CSV.")],[("csv","CSV path")]),
("crypto-price-alert","Crypto price alert","Check the Bitcoin price from a public API and send a Slack alert when it crosses a threshold.",
 [("threshold","number","Alert price")],[("price","http","Get the price."),("alert","mcp-slack-post-message","Alert when crossed.")],[("price","Current price")]),
("expense-categorize","Categorize expenses","Categorize bank transactions from a CSV export into budget categories and total each one.",
 [("file","string","Transactions CSV")],[("read","read-file","Read the export."),("categorize","llm","Assign categories."),("totals","code","Sum per category.")],[("totals","Totals per category")]),
("notion-page-export","Export Notion page","Export a Notion page to markdown and save it in the docs folder.",
 [("page_id","string","Notion page id")],[("page","mcp-notion-retrieve-page","Fetch the page."),("save","write-file","Write markdown.")],[("path","Saved file")]),
("linear-bug-report","File a bug in Linear","Create a Linear issue from an error message and stack trace with reproduction steps.",
 [("error","string","Error text")],[("write","llm","Write the bug report."),("create","mcp-linear-create-issue","Create the issue.")],[("issue_url","Issue link")]),
("sentry-weekly","Weekly Sentry errors","Summarize the week's top Sentry errors by frequency and affected users.",
 [("project","string","Sentry project")],[("issues","http","Sentry API issues."),("summarize","llm","Weekly summary.")],[("summary","Summary")]),
("ssl-cert-expiry","SSL certificate expiry","Check when the TLS certificates of a list of domains expire and warn about those expiring within 30 days.",
 [("domains","array","Domains")],[("check","shell","openssl s_client for each domain."),("warn","code","Filter soon-expiring certs.")],[("expiring","Domains expiring soon")]),
("env-file-check","Check .env against example","Compare a .env file with .env.example and list missing or extra variables.",
 [],[("read","read-file","Read both files."),("diff","code","Compare keys.")],[("missing","Missing variables")]),
("word-count","Count words","Count words, lines and characters in text files and report the totals.",
 [("files","array","Files")],[("wc","shell","wc on each file.")],[("totals","Totals")]),
("markdown-link-check","Check markdown links","Find broken links in markdown documentation files.",
 [("dir","string","Docs directory")],[("links","shell","Extract links."),("check","http","HEAD each link.")],[("broken","Broken links")]),
("spellcheck-docs","Spellcheck documentation","Find spelling mistakes in the docs folder and propose corrections.",
 [("dir","string","Docs directory")],[("read","shell","Collect text."),("check","llm","Find typos and fixes.")],[("typos","Typos with fixes")]),
("github-star-history","Repository star stats","Get stars, forks and open issue counts for a list of GitHub repositories.",
 [("repos","array","owner/name list")],[("stats","mcp-github-get-repository","Repository statistics.")],[("stats","Stats per repository")]),
("memory-knowledge-note","Save a note to memory","Store a fact in the knowledge graph memory server so agents can recall it later.",
 [("fact","string","The fact to remember")],[("store","mcp-memory-create-entities","Create the entity.")],[("id","Entity id")]),
("file-organizer","Organize downloads folder","Sort files in the Downloads folder into subfolders by file type.",
 [("folder","string","Folder to organize")],[("list","shell","List files."),("move","code","Move by extension.")],[("moved","Files moved")]),
("hello","Hello","Greets someone by name and shouts it.",
 [("name","string","Who to greet.")],[("greet","shell","Say hello."),("upper","shell","Uppercase it.")],[("message","The greeting.")]),
]


OUT={"shell":"stdout","llm":"response","http":"response","code":"result","read-file":"content","write-file":"file_path","copy-file":"dest_path"}
PYT={"string":"str","integer":"int","number":"float","array":"list","object":"dict","boolean":"bool"}
def outkey(t): return OUT.get(t,"result")
def render(name, title, desc, inputs, steps, outputs):
    out = [f"# {title}", "", desc, ""]
    itype = {n:t for n,t,d in inputs}
    if inputs:
        out += ["## Inputs", ""]
        for n, t, d in inputs:
            out += [f"### {n}", "", d + ".", "", f"- type: {t}", ""]
    out += ["## Steps", ""]
    unused = [n for n,_,_ in inputs]
    prev = None
    for sid, typ, purpose in steps:
        out += [f"### {sid}", "", purpose, "", f"- type: {typ}"]
        ref = f"${{{prev[0]}.{outkey(prev[1])}}}" if prev else ""
        if typ == "shell":
            lists = [u for u in unused if itype[u] in ("array","object")]
            if lists and not prev:
                out += [f"- stdin: ${{{lists[0]}}}"]
                unused.remove(lists[0])
            args = " ".join(f"${{{u}}}" for u in unused); unused=[]
            if prev: out += [f"- stdin: {ref}"]
            out += ["", "```shell command", f"echo {sid} {args}".rstrip(), "```"]
        elif typ == "llm":
            args = "\n".join(f"{u}: ${{{u}}}" for u in unused); unused=[]
            body = purpose + ("\n\n" + args if args else "") + ("\n\n" + ref if ref else "")
            out += ["", "```prompt", body, "```"]
        elif typ == "http":
            q = "&".join(f"{u}=${{{u}}}" for u in unused); unused=[]
            out += [f"- url: https://example.com/api" + ("?" + q if q else "")]
        elif typ == "code":
            if unused:
                out += ["- inputs:"] + [f"    {u}: ${{{u}}}" for u in unused]
            ann = [f"{u}: {PYT.get(itype[u],'str')}" for u in unused]; unused=[]
            out += ["", "```python code"] + ann + ["result: int = 1", "```"]
        elif typ == "read-file":
            fp = unused.pop(0) if unused else None
            out += [f"- file_path: ${{{fp}}}" if fp else "- file_path: input.txt"]
        elif typ == "write-file":
            out += ["- file_path: out.txt", f"- content: {ref}" if ref else "- content: x"]
        elif typ == "copy-file":
            d = "dest" if "dest" in unused else None
            if d: unused.remove(d)
            out += [f"- source_path: {ref or 'a'}", f"- dest_path: ${{{d}}}" if d else "- dest_path: backup/"]
        else:  # an MCP tool
            for u in unused: out += [f"- {u}: ${{{u}}}"]
            unused=[]
            if ref: out += [f"- data: {ref}"]
        out += [""]
        prev = (sid, typ)
    assert not unused, (name, unused)
    if outputs:
        out += ["## Outputs", ""]
        for n, d in outputs:
            out += [f"### {n}", "", d + ".", "", f"- source: ${{{steps[-1][0]}.{outkey(steps[-1][1])}}}", ""]
    return "\n".join(out)

import os
base = os.path.dirname(os.path.abspath(__file__))
names = set()
for w in W:
    assert w[0] not in names, w[0]
    names.add(w[0])
    open(f"{base}/workflows/{w[0]}.pflow.md", "w").write(render(*w))
print(len(W))
