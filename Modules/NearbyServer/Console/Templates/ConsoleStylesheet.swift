/// The console's one stylesheet: system fonts, readable from 360 px wide up, visible focus.
enum ConsoleStylesheet {
  static let text = """
    *{box-sizing:border-box}
    body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1b1b;background:#fafafa}
    a{color:#0b57d0}
    a:focus,button:focus,input:focus,select:focus,textarea:focus{outline:3px solid #f5a623;outline-offset:2px}
    .skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5em}
    .skip:focus{left:.5em}
    header{background:#1f3b57;color:#fff;padding:.5em 1em;display:flex;flex-wrap:wrap;gap:.5em 1.5em;align-items:center}
    header a{color:#fff}
    header nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25em 1em}
    header form{margin-left:auto}
    main{padding:1em;max-width:72em;margin:auto}
    h1{font-size:1.5em;margin:.2em 0 .6em;overflow-wrap:anywhere}
    h2{font-size:1.2em;margin-top:1.5em}
    table{border-collapse:collapse;width:100%;display:block;overflow-x:auto}
    th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #ddd;vertical-align:top;overflow-wrap:break-word}
    th{white-space:nowrap}
    fieldset{min-width:0;border:1px solid #ccc;margin:1em 0;padding:.2em .8em .8em}
    label{display:block;font-weight:600;margin-top:.8em}
    input,select,textarea{font:inherit;padding:.35em;max-width:100%;width:28em;border:1px solid #888;border-radius:3px}
    input[type=checkbox],input[type=radio]{width:auto}
    button{font:inherit;padding:.35em 1em;margin-top:.8em;border:1px solid #1f3b57;background:#1f3b57;color:#fff;border-radius:3px;cursor:pointer}
    main button:not(.quiet){display:block}
    button.quiet{background:#fff;color:#1f3b57;margin-top:0}
    .error{color:#b00020;font-weight:600}
    .notice{background:#e7f3e7;border:1px solid #6a6;padding:.6em}
    .secret{font-family:monospace;background:#fff3cd;padding:.4em;word-break:break-all}
    .figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(14em,1fr));gap:.8em;padding:0;list-style:none}
    .figures li{background:#fff;border:1px solid #ddd;padding:.8em}
    .figures strong{display:block;font-size:1.6em}
    .hint{color:#555;font-size:.9em}
    code{overflow-wrap:break-word}
    @media (max-width:600px){header form{margin-left:0}main{padding:.6em}}
    """
}
