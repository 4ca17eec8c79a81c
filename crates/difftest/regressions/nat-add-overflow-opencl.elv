def s = DFNF ;
  try(unroll @ innermost(isReduce)) ;;
  try(split(8) @ innermost(appliedMap)) ;;
  try(split(32) @ innermost(appliedReduce)) ;;
  lowerToC
