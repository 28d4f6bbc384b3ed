-- on-error = "accept": a failing policy lets the job through.
local jobtap = require "jobtap"
jobtap.on ("job.validate", function (job)
    if job.name == "lenient-boom" then error ("lenient boom") end
end)
