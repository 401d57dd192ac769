// toxgate: small progressive enhancements. Every page works without this file.
(function () {
  "use strict";
  // Resource upload form: send with XMLHttpRequest to show a progress bar,
  // then go where the server's redirect went (the new resource's page), or
  // show the errors of the form the server answered with.
  var form = document.getElementById("resource-form");
  if (form && window.FormData && window.XMLHttpRequest) {
    form.addEventListener("submit", function (ev) {
      var file = document.getElementById("upload");
      if (!file || !file.files || file.files.length === 0) {
        return; // a link: the ordinary submit is enough
      }
      ev.preventDefault();
      var bar = document.getElementById(form.getAttribute("data-progress"));
      var status = document.getElementById("upload-status");
      var button = document.getElementById("save-resource");
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.upload.addEventListener("progress", function (e) {
        if (e.lengthComputable && bar) {
          bar.hidden = false;
          bar.value = Math.round((100 * e.loaded) / e.total);
          status.textContent = bar.value + " %";
        }
      });
      xhr.addEventListener("load", function () {
        if (xhr.status === 200 && xhr.responseURL && xhr.responseURL.indexOf("/resource/new") < 0) {
          window.location.assign(xhr.responseURL);
          return;
        }
        var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
        var errs = doc.getElementById("field-errors") || doc.getElementById("error") || doc.querySelector("main");
        status.textContent = errs ? errs.textContent.trim() : "The upload failed (" + xhr.status + ").";
        status.className = "error";
        button.disabled = false;
      });
      xhr.addEventListener("error", function () {
        status.textContent = "The upload failed: the connection was lost.";
        status.className = "error";
        button.disabled = false;
      });
      button.disabled = true;
      if (bar) { bar.hidden = false; bar.value = 0; }
      status.textContent = "Uploading…";
      xhr.send(new FormData(form));
    });
  }
  // Model batch input: put the chosen file's text into the SMILES box.
  var list = document.getElementById("smiles-file");
  if (list && window.FileReader) {
    list.addEventListener("change", function () {
      var f = list.files && list.files[0];
      var box = document.getElementById("smiles-list");
      if (!f || !box) { return; }
      var rd = new FileReader();
      rd.onload = function () { box.value = String(rd.result); };
      rd.readAsText(f);
    });
  }
  // Job page: follow a running job's progress once a second, then reload
  // the page when it ends (to show the result and drop the Cancel button).
  var job = document.getElementById("job");
  if (job && job.getAttribute("data-running") === "true" && window.fetch) {
    var jobBar = document.getElementById("job-progress");
    var jobText = document.getElementById("job-progress-text");
    var jobState = document.getElementById("job-state");
    var follow = function () {
      fetch(job.getAttribute("data-progress-url"), { credentials: "same-origin", cache: "no-store" })
        .then(function (resp) { return resp.ok ? resp.json() : null; })
        .then(function (p) {
          if (!p) { window.setTimeout(follow, 3000); return; }
          jobBar.max = p.total;
          jobBar.value = p.done;
          jobBar.textContent = p.percent + " %";
          jobText.textContent = p.text;
          jobState.textContent = p.state;
          if (!p.running) {
            window.location.reload();
            return;
          }
          window.setTimeout(follow, 1000);
        })
        .catch(function () { window.setTimeout(follow, 3000); });
    };
    window.setTimeout(follow, 1000);
  }
})();
