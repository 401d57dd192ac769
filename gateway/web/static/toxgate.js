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
      var progress = function (loaded, total) {
        if (bar && total > 0) {
          bar.hidden = false;
          bar.value = Math.round((100 * loaded) / total);
          status.textContent = bar.value + " %";
        }
      };
      var failed = function (msg) {
        status.textContent = msg;
        status.className = "error";
        button.disabled = false;
      };
      button.disabled = true;
      if (bar) { bar.hidden = false; bar.value = 0; }
      status.textContent = "Uploading…";
      // With tus-js-client (served from /static/vendor/ when the gateway was
      // built with it), the file goes up resumably to /uploads/: a dropped
      // connection is retried from where it stopped, and choosing the same
      // file again after a reload resumes the earlier upload (its URL is
      // kept in localStorage). The form's other fields then go with the
      // upload's id as an ordinary urlencoded post.
      var endpoint = form.getAttribute("data-tus-endpoint");
      if (window.tus && window.tus.isSupported && endpoint && window.URLSearchParams) {
        var f = file.files[0];
        var pkg = form.querySelector("input[name=package_id]");
        var upload = new window.tus.Upload(f, {
          endpoint: endpoint,
          retryDelays: [0, 1000, 3000, 5000, 10000, 20000],
          chunkSize: 64 * 1024 * 1024,
          removeFingerprintOnSuccess: true,
          metadata: { package_id: pkg ? pkg.value : "", filename: f.name, filetype: f.type || "application/octet-stream" },
          onProgress: progress,
          onError: function (err) {
            failed("The upload failed: " + ((err && err.originalResponse && err.originalResponse.getBody()) || err));
          },
          onSuccess: function () {
            var fields = new URLSearchParams();
            Array.prototype.forEach.call(form.elements, function (el) {
              if (el.name && el.type !== "file" && el.type !== "submit") { fields.append(el.name, el.value); }
            });
            fields.append("upload_id", upload.url);
            send("application/x-www-form-urlencoded", fields.toString());
          }
        });
        upload.findPreviousUploads().then(function (previous) {
          if (previous.length > 0) { upload.resumeFromPreviousUpload(previous[0]); }
          upload.start();
        });
        return;
      }
      send(null, new FormData(form));
    });
  }
  function send(contentType, body) {
    var form = document.getElementById("resource-form");
    var bar = document.getElementById(form.getAttribute("data-progress"));
    var status = document.getElementById("upload-status");
    var button = document.getElementById("save-resource");
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    if (contentType) { xhr.setRequestHeader("Content-Type", contentType); }
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable && bar && !contentType) {
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
    xhr.send(body);
  }
  // Model batch input: put the chosen file's text into the SMILES box.
  var list = document.getElementById("smiles-file");
  if (list && window.FileReader) {
    list.addEventListener("change", function () {
      var f = list.files && list.files[0];
      var box = document.getElementById("smiles-list");
      if (!f || !box) { return; }
      var rd = new FileReader();
      rd.onload = function () {
        box.value = String(rd.result);
        box.dispatchEvent(new Event("input", { bubbles: true })); // redraws its molecules
      };
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
